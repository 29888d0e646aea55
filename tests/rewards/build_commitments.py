"""Build tests/rewards/data/commitment_suite.jsonl: one committed value or none (issue #22).

Labels are set by hand per shape from the rule in docs/verifier.md ("The final output commits to exactly one
value"), never by running a verifier:

- the final output is what follows Qwen3's `</think>`; an unclosed `<think>` has no final output;
- commitments are `\\boxed{}`, `Answer:` lines, "the (final) answer is N" sentences and the conclusion
  sentence right before the marked answer; an aside inside a commitment that asserts another value, or a
  conditional answer with two values, is two commitments; two commitments with different values: wrong;
- negated ("is not 34"), conditional ("if ... would be 30"), exemplary ("e.g. `Answer: 123`") and passing
  mentions are not commitments;
- for an integer ground truth (AIME, DAPO), the committed value must be written as a number: `\\frac{68}{2}`,
  `34/1`, `10^3`, `404 + 405` are not the integer asked for; leading zeros, `34.0`, thousands separators,
  number words, one value in brackets, a `\\pmod{}` qualifier and a unit after the number are;
- a unit is not checked against the question (the reward function does not see it): a unit never changes the
  value, so "wrong unit" rows here are labelled by the number;
- a box that never closes is no answer.

16 problem bodies (AIME and DAPO ground truths), each with a short Qwen3 `<think>` block. Deterministic:
`python tests/rewards/build_commitments.py` regenerates the file.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).parent / "data" / "commitment_suite.jsonl"

# (data_source, ground truth, a wrong value, number words of the truth, thinking, summary sentence, unit)
PROBLEMS = [
    ("math_dapo", "34", "55", "thirty-four", "The sequence is Fibonacci-like: 1, 1, 2, 3, 5, 8, 13, 21, 34. "
     "The eighth term after the two seeds is 34, the next one 55.", "Counting tilings of a 2 x 8 strip gives "
     "the Fibonacci number $F_9$.", "tilings"),
    ("aime2024", "204", "240", "two hundred four", "Let the walk take $s$ hours. Then $9/s + t = 4$ and "
     "$9/(s+2) + t = 2.4$, so $s = 2.5$ and $t = 0.4$ h, i.e. 24 minutes.", "At $s + 1/2 = 3$ km/h the walk "
     "takes 3 hours plus 24 minutes of coffee, 204 minutes in all.", "minutes"),
    ("aime2024", "25", "52", "twenty-five", "From $\\log_x(y^x) = 10$ we get $x \\log_x y = 10$ and from the "
     "other $4y \\log_y x = 10$; multiplying, $4xy = 100$.", "Hence $xy = 25$.", ""),
    ("aime2025", "70", "49", "seventy", "In base $b$, $17_b = b + 7$ and $97_b = 9b + 7$; $b + 7$ divides "
     "$9b + 7 = 9(b+7) - 56$, so $b + 7 \\mid 56$, giving $b = 21$ or $b = 49$.", "The bases sum to "
     "$21 + 49 = 70$.", ""),
    ("math_dapo", "1000", "100", "one thousand", "Each of the ten digits of the code can be chosen so that "
     "three independent positions range over ten values: $10 \\cdot 10 \\cdot 10$.", "So there are $10^3$ "
     "codes, that is 1000 codes.", "codes"),
    ("math_dapo", "809", "404", "eight hundred nine", "Losing positions for the first player are $n \\equiv 0$ "
     "or $2 \\pmod 5$. Up to 2024 there are 404 of the first kind and 405 of the second.", "Adding, "
     "$404 + 405 = 809$ values of $n$.", "values"),
    ("aime2024", "113", "131", "one hundred thirteen", "Power of the point $D$: $DB^2 = DA \\cdot DP$; with "
     "$DB = \\frac{225}{22}$ and $DA = \\frac{325}{22}$ we get $AP = \\frac{100}{13}$.", "So $m + n = 100 + 13 "
     "= 113$.", ""),
    ("math_dapo", "12", "21", "twelve", "The rectangle has perimeter 14 and diagonal 5, so $a + b = 7$ and "
     "$a^2 + b^2 = 25$, giving $ab = 12$.", "Its area is 12 square centimetres.", "cm^2"),
    ("aime2025", "588", "558", "five hundred eighty-eight", "Reflections double the area of each sub-triangle "
     "and the heptagon covers the whole triangle, area 588.", "The heptagon's area equals the triangle's, 588.",
     ""),
    ("math_dapo", "45", "135", "forty-five", "The two tangents meet the chord at equal angles; the inscribed "
     "angle is half of the central angle of 90 degrees.", "The angle is $45^\\circ$.", "degrees"),
    ("math_dapo", "2024", "2023", "two thousand twenty-four", "Telescoping, the product collapses to "
     "$\\frac{2025 - 1}{1}$.", "The product equals 2024.", ""),
    ("aime2024", "73", "37", "seventy-three", "By inclusion-exclusion on the four items, "
     "$x + 2y + 3z = 1124$ and $x + y + z = 234$ with $y = 437$, so $z = 73$.", "Residents owning all four "
     "number 73.", "residents"),
    ("math_dapo", "6", "8", "six", "The remainder of $2^{10}$ modulo 7: $2^3 \\equiv 1$, so $2^{10} \\equiv "
     "2^1 = 2$; modulo 9 the powers cycle with period 6.", "The period of 2 modulo 9 is 6.", ""),
    ("aime2025", "117", "171", "one hundred seventeen", "Factor $12x^2 - xy - 6y^2 = (3x + 2y)(4x - 3y)$, so "
     "either $3x = -2y$ or $4x = 3y$: 67 and 51 pairs, one counted twice.", "So $67 + 51 - 1 = 117$ pairs.",
     "pairs"),
    ("math_dapo", "30", "34", "thirty", "Three-digit numbers with distinct digits from {1, 2, 3, 4, 5} that are "
     "even: the last digit is 2 or 4, then $4 \\cdot 3$ choices each.", "That gives $2 \\cdot 12 = 24$, plus 6 "
     "with a repeated middle digit excluded above, so 30.", "numbers"),
    ("aime2024", "321", "123", "three hundred twenty-one", "Modulo 1000 the product of $(2 - 2\\omega^k + "
     "\\omega^{2k})$ over the 13th roots of unity is $8321$.", "The remainder is 321.", ""),
]


def think(p: tuple) -> str:
    return f"<think>\nOkay, let me work through this.\n{p[4]}\nI think that is it.\n</think>\n\n{p[5]}\n\n"


def build() -> list[dict]:
    rows: list[dict] = []

    def add(shape: str, p: tuple, response: str, label: bool, note: str):
        rows.append({"id": f"k{len(rows) + 1:04d}", "shape": shape, "data_source": p[0], "response": response,
                     "ground_truth": p[1], "label": label, "note": note})

    for i, p in enumerate(PROBLEMS):
        ds, gt, w, words, _, _, unit = p
        t = think(p)
        pick = i % 4  # each problem gets a quarter of the rotating shapes, all of the fixed ones

        # --- controls: exactly one value committed, in forms a strict grader accepts
        add("control", p, t + f"Answer: {gt}", True, "one answer line")
        add("control", p, t + f"**Final Answer**\n\\[\n\\boxed{{{gt}}}\n\\]", True, "one box")
        add("control", p, t + f"The answer is $\\boxed{{{gt}}}$.\n\nAnswer: {gt}", True, "box and line agree")
        if len(gt) < 3:
            add("control", p, t + f"Answer: {int(gt):03d}", True, "AIME zero padding")

        # --- a second candidate inside or beside the answer
        add("aside", p, t + f"Answer: {w} (that is, $a = {gt}$)", False, "aside asserts the truth, line says other")
        add("aside", p, t + f"Answer: {gt} (that is, $a = {w}$)", False, "line says truth, aside asserts other")
        if pick in (0, 2):
            add("aside", p, t + f"\\boxed{{{gt}}} (or equivalently {w})", False, "box with an 'or' aside")
        if pick in (1, 3):
            add("aside", p, t + f"Answer: {w}, i.e. {gt}", False, "i.e. aside with another value")
        add("conditional", p, t + f"Answer: {gt} if the digits may repeat, else {w}", False, "two-valued answer")
        if pick in (0, 1):
            add("conditional", p, t + f"The answer is {w} if we count reflections as distinct and {gt} otherwise.",
                False, "two-valued prose answer")
        if pick in (2, 3):
            add("conditional", p, t + f"\\boxed{{{w} \\text{{ or }} {gt}}}", False, "two values in one box")

        # --- two final commitments that disagree, every pairing, both orders
        add("conflict", p, t + f"\\boxed{{{gt}}}\n\nAnswer: {w}", False, "box vs line (line wrong)")
        add("conflict", p, t + f"\\boxed{{{w}}}\n\nAnswer: {gt}", False, "box vs line (box wrong)")
        add("conflict", p, t + f"Answer: {w}\n\nAnswer: {gt}", False, "two answer lines")
        if pick in (0, 2):
            add("conflict", p, t + f"So the result is $\\boxed{{{w}}}$. Rechecking the count, the total is "
                f"$\\boxed{{{gt}}}$.", False, "two boxes in two sentences")
        if pick in (1, 3):
            add("conflict", p, t + f"Therefore, the answer is {w}.\n\n**Final Answer**\n\\boxed{{{gt}}}", False,
                "answer sentence vs box")
        if pick in (0, 3):
            add("conflict", p, t + f"Answer: {gt}\n\nWait, actually the answer is {w}.", False,
                "answer line then an answer sentence")
        if pick in (1, 2):
            add("conflict", p, t + f"Thus there are {w} in total.\n\nAnswer: {gt}", False,
                "conclusion sentence vs answer line")

        # --- mentions that are not commitments
        add("negated", p, t + f"The answer is not {gt}; the count above is off by a case.", False,
            "only a negated mention")
        add("negated", p, t + f"Note that the answer is not {w}, which double counts.\n\nAnswer: {gt}", True,
            "negated mention of another value, one commitment")
        if pick in (0, 1):
            add("exemplary", p, t + f"(I will give the answer in the form `Answer: 123`, e.g. Answer: {gt}.)",
                False, "only an example of the format")
        add("exemplary", p, t + f"The required format is, for example, `Answer: {w}`.\n\nAnswer: {gt}", True,
            "format example with another value, then the answer")
        if pick in (2, 3):
            add("passing", p, t + f"We saw {gt} earlier as a partial count, but more cases remain.\n\nAnswer: {w}",
                False, "passing mention of the truth, committed to another value")
        add("passing", p, t + f"Earlier we briefly considered {w}, which was too many.\n\nAnswer: {gt}", True,
            "passing mention of another value")
        add("conditional_mention", p, t + f"If zero were allowed, the count would be {w}.\n\nAnswer: {gt}", True,
            "a conditional mention is not a commitment")

        # --- value-equal expressions, not the integer asked for (integer ground truths)
        n = int(gt)
        add("value_equal", p, t + f"Answer: $\\frac{{{2 * n}}}{{2}}$", False, "unreduced fraction")
        if pick in (0, 2):
            add("value_equal", p, t + f"\\boxed{{{n}/1}}", False, "integer over 1")
        if pick in (1, 3):
            add("value_equal", p, t + f"Answer: {n - 1} + 1", False, "a sum, not the number")
        if gt == "1000":
            add("value_equal", p, t + "Answer: $10^3$", False, "a power, not the number")
        if gt == "809":
            add("value_equal", p, t + "\\boxed{404 + 405}", False, "the sum of the two counts, unevaluated")

        # --- units
        if unit:
            add("unit", p, t + f"Answer: {gt} {unit}", True, "the number with its unit")
            add("unit_paren", p, t + f"Answer: {gt} ({unit})", True, "unit in parentheses after the number")
            add("unit", p, t + f"Answer: {w} {unit}", False, "wrong number with a unit")
        if pick == 1:
            add("unit", p, t + f"Answer: {gt} meters", True, "a unit never changes the value (not checked "
                "against the question, which the reward function does not see)")

        # --- truncation and thinking
        add("truncated", p, t + f"Answer: \\boxed{{{gt}", False, "box never closes")
        if pick in (0, 2):
            add("truncated", p, t + f"So the final answer is $\\boxed{{{gt}", False, "box never closes in prose")
        add("unclosed_think", p, f"<think>\nOkay. {p[4]}\nSo the answer is {gt}.\nAnswer: {gt}", False,
            "cut off inside thinking")
        add("thinking_only", p, f"<think>\n{p[4]}\nAnswer: {gt}\n</think>\n\nI could not finish the count.",
            False, "the answer only inside the thinking")
        add("think_revised", p, f"<think>\n{p[4]}\nMaybe {w}? No.\n</think>\n\n{p[5]}\n\nAnswer: {gt}", True,
            "a candidate inside the thinking is not part of the final output")

        # --- false negatives of the old verifier
        add("number_words", p, t + f"Answer: {words}", True, "the number in words")
        if pick in (0, 2):
            add("number_words", p, t + f"The answer is {words.capitalize()}.", True, "number words in a sentence")
        add("brackets", p, t + f"Answer: [{gt}]", True, "one value in brackets")
        if pick in (1, 3):
            add("brackets", p, t + f"Answer: ({gt})", True, "one value in parentheses")
        add("pmod", p, t + f"Answer: ${gt} \\pmod{{1000}}$", True, "a remainder with its modulus")
        if pick in (0, 1):
            add("pmod", p, t + f"\\boxed{{{gt} \\pmod{{1000}}}}", True, "pmod inside the box")
        if pick in (2, 3):
            add("pmod", p, t + f"Answer: {gt} (mod 1000)", True, "(mod 1000) after the remainder")
    return rows


if __name__ == "__main__":
    rows = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(OUT)
    print(f"{len(rows)} cases -> {OUT}")

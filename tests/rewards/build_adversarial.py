"""Build tests/rewards/data/adversarial_suite.jsonl: reward-hacking and formatting cases (issue #14).

Every label is set by hand per shape, as a careful grader of an integer-answer test sets it, never by running
a verifier. The rule the labels follow: credit only an answer the response gives *as its final answer* (an
`Answer:` line, a final `\\boxed{}`, or an explicit concluding statement at the end, after `</think>`), and
accept that answer in any form a grader accepts (units, LaTeX spacing, display math, `\\dfrac`, terminal
noise around it). Most reward-hacking cases contain the ground truth somewhere in the body on purpose: a
verifier that reads numbers out of the body credits them (a false positive).

Run `python tests/rewards/build_adversarial.py` to regenerate (deterministic, no randomness).
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).parent / "data" / "adversarial_suite.jsonl"

# Bodies that mention the ground truth 36 (and other numbers) while working, without concluding.
BODY36 = (
    "The rectangle has sides $4$ and $9$, so its area is $4 \\cdot 9 = 36$. The square with the same perimeter "
    "has side $\\frac{26}{4} = 6.5$ and area $42.25$. We still have to subtract the overlap of the two regions, "
    "which depends on how they are placed."
)
LONG36 = "\n\n".join(
    [
        "Let me set up the problem. There are $36$ tiles on the board and each move flips $3$ of them.",
        "If we flip rows first we need $12$ moves, and columns need another $12$, so $24$ in total; but some "
        "flips cancel. Consider the parity of each tile: a tile flipped twice returns to its original state.",
        "Counting the invariant, the number of black tiles changes by an odd number each move, starting from "
        "$36$ black tiles, so after an even number of moves the count stays even.",
    ]
)
PROMPT36 = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n"
    "A box holds 36 red and 12 blue marbles. How many marbles must be drawn to be sure of 3 of one colour?\n\n"
    'Remember to put your answer on its own line after "Answer:".'
)
RESTATE36 = (
    "We are told that a class of 36 students splits into teams of 4, 6 or 9, and that 36 is the smallest class "
    "size for which every split works. We need to find the number of ways to split a class of 72 students."
)


# Labels changed by the one-value rule of issue #22 (docs/verifier.md), each with its reason.
ONE_VALUE_RULE: dict[str, tuple[bool, str]] = {
    'a0155': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'a0156': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'a0157': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'a0159': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'a0160': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'a0109': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
}


def _relabel(rows: list[dict]) -> list[dict]:
    for r in rows:
        if r["id"] in ONE_VALUE_RULE:
            r["label"], why = ONE_VALUE_RULE[r["id"]]
            r["note"] = f"{r['note']}; {why}" if r["note"] else why
    return rows


def build() -> list[dict]:
    rows: list[dict] = []

    def add(shape: str, response: str, gt: str, label: bool, note: str = "", data_source: str = "math_dapo"):
        rows.append(
            {
                "id": f"a{len(rows) + 1:04d}",
                "shape": shape,
                "data_source": data_source,
                "response": response,
                "ground_truth": gt,
                "label": label,
                "note": note,
            }
        )

    # 1. No final answer at all; the ground truth sits in the body.
    for resp, note in [
        (BODY36, "body derives 36, then moves on"),
        (LONG36, "long working, no conclusion"),
        (LONG36 + "\n\nNext we look at the corner tiles, which behave differently.", "ends on a new step"),
        ("We compute $6 \\times 6 = 36$. Then we consider the border cells.", "a computation then a new step"),
        ("36 is the area of the big square. The small squares still have to be counted.", "number leads a sentence"),
        ("Step 1: the area is 36.\nStep 2: subtract the overlap.\nStep 3: divide by the symmetry.", "step list"),
        ("$$4 \\cdot 9 = 36$$\nThis is only the area of the first rectangle; the second one is next.", "display calc"),
        ("So far: 12 + 24 = 36 pieces. Let me now think about which of them are valid.", "running total"),
        (LONG36 + "\n\nI will now verify this with a different method.", "announces more work"),
        ("Note that $36 = 6^2$, which suggests looking at squares. Let us examine the squares modulo 7.", "aside"),
        ("Let me reconsider the problem from the beginning, since $36$ tiles and $3$ flips per move is odd.", "restart"),
        ("The possible values are 12, 24 and 36, and we need to check each of them against the constraint.", "list"),
    ]:
        add("no_answer", resp, "36", False, note)

    # 2. Truncated by the length limit: cut mid-sentence, mid-word, mid-formula, mid-number, mid-answer.
    for resp, note in [
        (BODY36 + " Thus the total is 36. Now to double check we compute the", "short conclusion then cut"),
        ("Thus the total is 36. Now to double check we compute the", "issue example: cut mid-sentence"),
        (LONG36 + "\n\nTherefore the answer is 36, but wait, I should check whether the", "answer then cut doubt"),
        (LONG36 + "\n\nSo the number of black tiles is 36 and the number of moves is $\\frac{36", "cut in frac"),
        (LONG36 + "\n\nAnswer: ", "cut right after the marker"),
        (LONG36 + "\n\nAnswer:", "marker, nothing after"),
        (LONG36 + "\n\n\\boxed{3", "cut inside the box (36 was coming)"),
        (LONG36 + "\n\nThe answer is", "cut before the value"),
        (LONG36 + "\n\nThe final answer is $\\boxed{", "cut at the box"),
        (LONG36 + " Hence there are 36 ways to place the first tile and then we multiply by the number of wa",
         "cut mid-word after a hence-clause"),
        ("So the area is 36 square units, and the perimeter is", "short, cut before a value"),
        (LONG36 + "\n\nLet me compute $6^2 = 36$, and then", "cut after a computation"),
        (LONG36 + "\n\n36 + 12 = 48, 48 - 12 = 36, so", "cut after so"),
        ("<think>\n" + LONG36 + "\n\nSo the answer should be 36. Let me verify", "cut inside thinking"),
        ("The answer is 3", "short: value cut (36 was being written)"),
    ]:
        add("truncated", resp, "36", False, note)

    # 3. Refusals after deriving the number.
    for resp, note in [
        ("So x = 36, that is the value.\n\nI cannot determine the answer.", "issue example: refusal at the end"),
        (BODY36 + "\n\nI cannot determine the answer.", "body with 36, then refusal"),
        (LONG36 + "\n\nTherefore the count is 36. However, I am unable to solve this problem completely.", "unable"),
        ("Therefore x = 36.\n\nThe answer cannot be determined from the given information.", "cannot be determined"),
        ("We get 36 in the first case. I don't know the answer.", "don't know"),
        ("Hence the result is 36? Actually, there is not enough information to answer.", "not enough information"),
        ("Thus we find 36. Sorry, I can't solve this problem.", "can't solve"),
        ("Answer: 36\n\nActually, I cannot determine the answer; the problem is underspecified.", "retracted answer"),
        ("\\boxed{36}\n\nWait, I am unable to determine the answer with certainty.", "retracted box"),
        ("Answer: \\text{cannot be determined}", "refusal as the answer"),
        ("\\boxed{\\text{Cannot be determined}}", "refusal boxed"),
        ("Answer: I don't know", "don't know as the answer"),
        ("Answer: unknown", "unknown as the answer"),
        ("因此答案是36。但是我无法确定答案。", "Chinese refusal after conclusion"),
        ("<think>\nIt is 36.\n</think>\n\nI cannot determine the answer.", "refusal after thinking"),
    ]:
        add("refusal", resp, "36", False, note)

    # 4. Empty or unclosed boxes and markers.
    for resp, note in [
        ("We get 36.\n\nAnswer: \\boxed{}", "issue example: empty box on the answer line"),
        ("Therefore x = 36.\n\nAnswer: \\boxed{}", "conclusion then empty box"),
        ("The answer is 36.\n\nAnswer: \\boxed{}", "answer phrase then empty box"),
        (LONG36 + "\n\nTherefore the total is 36.\n\n\\boxed{}", "empty box at the end"),
        ("Therefore the total is 36.\n\n$\\boxed{ }$", "box of a space"),
        ("Therefore the total is 36.\n\n\\boxed{\\,}", "box of thin space"),
        ("Therefore the total is 36.\n\nAnswer: $$", "empty math on the answer line"),
        ("Therefore the total is 36.\n\nAnswer: \\(\\)", "empty inline math"),
        ("Therefore the total is 36.\n\nAnswer: \\boxed{\\text{}}", "box of empty text"),
        ("Therefore the total is 36.\n\n**Answer:**", "bold marker, nothing after"),
        ("Therefore the total is 36.\n\n\\boxed{36", "unclosed box at the end"),
        ("Therefore the total is 36.\n\nAnswer: \\boxed{36", "unclosed box on the answer line"),
        ("Therefore the total is 36.\n\nFinal answer: \\fbox{}", "empty fbox"),
        ("Thus $x = 36$.\n\nAnswer: $\\boxed{}$.", "empty box in math"),
        ("Thus $x = 36$.\n\nAnswer: {}", "empty braces"),
    ]:
        add("empty_box", resp, "36", False, note)

    # 5. Many candidate numbers: enumeration, hedges, lists.
    for resp, note in [
        ("Answer: 34, 35, 36, 37", "list on the answer line"),
        ("\\boxed{35} or \\boxed{36}", "two boxes joined by or"),
        ("The answer is \\boxed{36} or \\boxed{35}.", "two boxes, right one first"),
        ("\\boxed{34}, \\boxed{35}, \\boxed{36}", "three boxes in a row"),
        ("The answer is 35, 36 or 37.", "prose list"),
        ("\\boxed{35, 36}", "two values in one box"),
        ("Answer: 36 or 37", "or on the answer line"),
        ("Answer: between 30 and 40", "a range"),
        ("Answer: 35/36/37", "slash list"),
        ("\\boxed{35}\\boxed{36}", "adjacent boxes"),
        ("\n".join(f"Answer: {i}" for i in range(20, 41)), "21 answer lines"),
        (" ".join(str(i) for i in range(1, 101)), "the numbers 1..100"),
        ("\n".join(str(i) for i in range(30, 37)), "a column of numbers ending in 36"),
        ("Answer: $36 \\text{ or } 35$", "or inside math"),
        ("Possible answers: \\boxed{12}, \\boxed{24}, \\boxed{36}.", "candidates listed as boxes"),
        ("Answer: 36\nAnswer: 35\nAnswer: 36\nAnswer: 35\nAnswer: 36", "alternating"),
    ]:
        add("candidates", resp, "36", False, note)

    # 6. The answer only inside the thinking.
    for resp, note in [
        ("<think>\nArea is 36.\nAnswer: 36\n</think>", "answer line only in thinking, nothing after"),
        ("<think>\nSo \\boxed{36}.\n</think>\n\nThe result follows from the computation above.", "box in thinking"),
        ("<think>\nThe answer is 36.\n</think>\n\n", "prose answer in thinking, blank after"),
        ("<think>\nAnswer: 36\n", "unclosed thinking with an answer line"),
        ("<think>\n" + LONG36 + "\n\nTherefore the answer is \\boxed{36}.", "unclosed thinking with a box"),
        ("<think>\nThe answer is 36.\n</think>\n\nAnswer: \\boxed{}", "thinking answer, empty final box"),
        ("<think>\nIt is 36.\n</think>\n\nLet me explain the approach: count tiles, then subtract overlaps.",
         "summary without the value"),
        ("<think>\n\\boxed{36}\n</think>\n<think>\nhmm", "second thinking block left open"),
        ("<think>\nAnswer: 36\n</think><|im_end|>", "thinking then end of turn"),
        ("<think>Answer: 36</think>\n\n**Answer:**", "thinking then an empty marker"),
    ]:
        add("thinking_only", resp, "36", False, note)

    # 7. The prompt echoed back (with numbers, one of them the ground truth).
    for resp, gt, note in [
        (PROMPT36, "36", "prompt echo only"),
        (PROMPT36 + "\n\nLet me think about this.", "36", "echo then a start"),
        (PROMPT36 + "\n\nAnswer:", "36", "echo then an empty answer line"),
        (PROMPT36.replace("36 red", "5 red"), "5", "echo whose first number is the truth"),
        ("A box holds 36 red and 12 blue marbles. How many marbles must be drawn to be sure of 3 of one colour?",
         "36", "problem text only"),
        ("A box holds 36 red and 12 blue marbles. How many marbles must be drawn to be sure of 3 of one colour?",
         "3", "problem text only, truth is the 3 in it"),
        (PROMPT36 + "\n\n" + PROMPT36, "36", "echo twice"),
        ("User: What is 6 times 6?\nAssistant: What is 6 times 6?", "36", "echo of a chat turn"),
    ]:
        add("prompt_echo", resp, gt, False, note)

    # 8. The ground truth appears in the problem restatement; the response concludes something else or nothing.
    for resp, gt, note in [
        (RESTATE36, "36", "restatement only"),
        (RESTATE36 + "\n\nAnswer: 12", "36", "restatement, then a wrong answer"),
        (RESTATE36 + "\n\nThe answer is $\\boxed{12}$.", "36", "restatement, then a wrong box"),
        (RESTATE36 + " Since 72 = 2 \\cdot 36, we double the count.", "36", "restatement and a step"),
        (RESTATE36 + "\n\nTherefore the number of ways is 5.", "36", "restatement, wrong conclusion"),
        ("Given that $a + b = 36$ and $ab = 320$, we want $a^2 + b^2$. We have $a^2+b^2 = 36^2 - 640$.", "36",
         "given contains truth, computation unfinished"),
        ("Given that $a + b = 36$ and $ab = 320$, we want $a^2 + b^2$.\n\nAnswer: 656", "36", "truth in the givens"),
        ("Recall the problem: 36 people shake hands. We need the number of handshakes.", "36", "recall then stop"),
    ]:
        add("restatement", resp, gt, False, note)

    # 9. Controls for the shapes above: a real final answer given properly is still credited.
    for resp, gt, note in [
        (LONG36 + "\n\nAnswer: 36", "36", "long body then answer line"),
        (PROMPT36 + "\n\nWe need 5 draws.\n\nAnswer: 5", "5", "prompt echo, then a real answer"),
        ("I cannot determine this directly, so let me try small cases.\n\n" + LONG36 + "\n\nAnswer: 36", "36",
         "refusal-like phrase early, answer at the end"),
        ("<think>\nMaybe 35? No.\n</think>\n\nThe total is $\\boxed{36}$.", "36", "thinking then boxed"),
        ("<think>\nAnswer: 35\n</think>\n\nAnswer: 36", "36", "wrong answer in thinking, right after"),
        (RESTATE36 + "\n\nAnswer: 7", "7", "restatement then right answer"),
        ("Therefore the total is 36.", "36", "concluding sentence"),
        ("The answer is 36.", "36", "answer phrase"),
        (BODY36 + " Placing them apart, the overlap is 0.\n\nTherefore the answer is 36.", "36", "concluded body"),
        ("First guess \\boxed{35}. After rechecking the overlap: \\boxed{36}", "36", "one revision"),
        ("Answer: \\boxed{36}", "36", "boxed on the answer line"),
        ("Therefore the total is 36. I hope it is correct.", "36", "closing remark after conclusion"),
        ("Answer: 36\n\nThis completes the solution.", "36", "closing sentence after the answer"),
        ("36", "36", "the bare answer"),
        ("<think>\nIt is 36.\n</think>\n\nAnswer: 36<|im_end|>", "36", "thinking, answer, end of turn"),
    ]:
        add("control", resp, gt, True, note)

    # 10. Units after the number on the answer line (the truth is the number).
    for resp, gt, label, note in [
        ("Answer: 12 \\text{ m}^2", "12", True, "issue example"),
        ("Answer: 12 cm^2", "12", True, "cm^2"),
        ("Answer: $12 \\text{ cm}^2$", "12", True, "\\text{ cm}^2 in math"),
        ("Answer: $12\\,\\text{cm}^2$", "12", True, "thin space then unit"),
        ("\\boxed{12 \\text{ m}^2}", "12", True, "unit in the box"),
        ("Answer: $12 \\mathrm{~cm}^{2}$", "12", True, "mathrm unit with braces"),
        ("Answer: 45^\\circ", "45", True, "degrees"),
        ("Answer: $45^{\\circ}$", "45", True, "degrees braced"),
        ("Answer: 45°", "45", True, "degree sign"),
        ("Answer: 25\\%", "25", True, "escaped percent"),
        ("Answer: $25\\%$", "25", True, "percent in math"),
        ("Answer: 12 square units", "12", True, "square units"),
        ("Answer: 8 \\text{ cm}^3", "8", True, "cubic"),
        ("Answer: 60 \\text{ km/h}", "60", True, "a rate unit"),
        ("Answer: 13 cm^2", "12", False, "wrong number with a unit"),
        ("Answer: 12 \\text{ m}^2", "144", False, "unit power is not the value"),
        ("Answer: 46^\\circ", "45", False, "wrong degrees"),
    ]:
        add("units", resp, gt, label, note)

    # 11. LaTeX spacing inside numbers.
    for resp, gt, label, note in [
        ("Answer: 1\\!,\\!024", "1024", True, "issue example \\!,\\!"),
        ("Answer: 1\\,024", "1024", True, "thin space"),
        ("Answer: 1\\;024", "1024", True, "thick space"),
        ("Answer: 1{,}024", "1024", True, "braced comma"),
        ("Answer: $1\\!,\\!000\\!,\\!000$", "1000000", True, "two groups with \\!,\\!"),
        ("Answer: $1\\,000\\,000$", "1000000", True, "two thin-space groups"),
        ("Answer: 1\u2009024", "1024", True, "unicode thin space"),
        ("\\boxed{2\\,025}", "2025", True, "thin space in a box"),
        ("Answer: 1\\,025", "1024", False, "wrong grouped number"),
        ("Answer: 1\\!,\\!024", "124", False, "group is not dropped"),
        ("Answer: 10\\,24", "1024", False, "not a thousands group"),
        ("Answer: 1\\:024", "1024", True, "medium space"),
    ]:
        add("spacing", resp, gt, label, note)

    # 12. The Answer label written inside display math.
    for resp, gt, label, note in [
        ("\\[\\text{Answer: } 7\\]", "7", True, "issue example"),
        ("$\\text{Answer: } 7$", "7", True, "inline math"),
        ("$$\\text{Answer: } 7$$", "7", True, "display dollars"),
        ("Work done.\n\\[\n\\text{Answer: } 7\n\\]", "7", True, "multi-line display"),
        ("$\\textbf{Answer:}\\ 7$", "7", True, "bold label"),
        ("\\(\\text{Answer: }7\\)", "7", True, "paren math"),
        ("\\[\\text{Answer:}\\quad 7\\]", "7", True, "quad spacing"),
        ("\\[\\text{Answer: } \\boxed{7}\\]", "7", True, "box inside"),
        ("\\[\\text{Answer: } 8\\]", "7", False, "wrong value"),
        ("$$\\text{Answer: } 7 \\text{ or } 8$$", "7", False, "hedge inside display"),
        ("\\[\\text{Answer: }\\]", "7", False, "empty display answer"),
    ]:
        add("display_math", resp, gt, label, note)

    # 13. \dfrac / \tfrac forms of an integer.
    for resp, gt, label, note in [
        ("Answer: \\dfrac{14}{2}", "7", True, "dfrac"),
        ("Answer: \\tfrac{21}{3}", "7", True, "tfrac"),
        ("\\boxed{\\dfrac{84}{12}}", "7", True, "dfrac in a box"),
        ("Answer: $\\dfrac{15}{2}$", "7", False, "not an integer"),
        ("Answer: \\dfrac{-14}{2}", "-7", True, "negative"),
        ("Answer: $-\\tfrac{21}{3}$", "-7", True, "minus outside"),
    ]:
        add("dfrac", resp, gt, label, note)

    # 14. Terminal noise: ANSI colour codes and mojibake around the answer.
    for resp, gt, label, note in [
        ("\x1b[1mAnswer: 42\x1b[0m", "42", True, "bold ANSI around the line"),
        ("Answer: \x1b[32m42\x1b[0m", "42", True, "green ANSI around the value"),
        ("\x1b[1;31mAnswer:\x1b[0m 42", "42", True, "ANSI on the label"),
        ("Answer:\u00c2\u00a042", "42", True, "UTF-8 nbsp read as Latin-1"),
        ("Answer: 42\u00c2", "42", True, "stray A-circumflex"),
        ("\u00e2\u20ac\u2039Answer: 42", "42", True, "zero-width space mojibake"),
        ("\u00ef\u00bb\u00bfAnswer: 42", "42", True, "BOM mojibake"),
        ("Answer: 42\ufffd", "42", True, "replacement character"),
        ("Answer: \x1b[32m43\x1b[0m", "42", False, "ANSI around a wrong value"),
        ("\x1b[1mAnswer: 4\x1b[0m", "42", False, "ANSI around a wrong value that is a prefix of the truth"),
        ("Answer:\u00c2\u00a043", "42", False, "mojibake around a wrong value"),
        ("\\boxed{\x1b[1m42\x1b[0m}", "42", True, "ANSI inside a box"),
    ]:
        add("noise", resp, gt, label, note)

    # 15. Stray braces.
    for resp, gt, label, note in [
        ("Answer: {42}", "42", True, "braced value"),
        ("Answer: {{42}}", "42", True, "double braces"),
        ("\\boxed{{42}}", "42", True, "braces in a box"),
        ("\\boxed{42}}", "42", True, "an extra closing brace after the box"),
        ("Answer: 42}", "42", True, "a stray closing brace"),
        ("Answer: {43}", "42", False, "braced wrong value"),
        ("Answer: {42}{43}", "42", False, "two braced groups render as 4243"),
    ]:
        add("braces", resp, gt, label, note)
    return _relabel(rows)


if __name__ == "__main__":
    rows = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(OUT)
    print(f"{len(rows)} cases -> {OUT}")

"""Build tests/rewards/data/verifier_corpus.jsonl: labelled (response, ground_truth, label) cases.

Labels are set by hand per shape, as a careful grader of an integer-answer test would set them, never by
running any verifier. Run `python tests/rewards/build_corpus.py` to regenerate (deterministic).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).parent / "data" / "verifier_corpus.jsonl"

COT = [
    "Let $n$ be the number of integers we need. We first factor $2024 = 2^3 \\cdot 11 \\cdot 23$, so the "
    "divisors pair up as $d$ and $2024/d$. Counting pairs with $d < 2024/d$ gives the total we want.",
    "We set up coordinates with $A=(0,0)$, $B=(6,0)$ and $C=(0,8)$. Then $BC = \\sqrt{36+64} = 10$ and the "
    "inradius is $r = \\frac{6+8-10}{2} = 2$. The tangent lengths follow from $s - a$, $s - b$, $s - c$.",
    "Consider the polynomial $P(x) = x^3 - 7x + 6 = (x-1)(x-2)(x+3)$. Its roots are $1$, $2$ and $-3$, "
    "so by Vieta's formulas the sum of the squares of the roots is $1 + 4 + 9 = 14$.",
    "There are $\\binom{10}{3} = 120$ ways to choose the committee, and $\\binom{6}{3} = 20$ of them have no "
    "woman, so $120 - 20 = 100$ committees contain at least one woman.",
    "Working modulo $1000$, we need $2^{n} \\equiv 1 \\pmod{125}$ and $\\pmod 8$ separately; the order of 2 "
    "modulo 125 is 100, so the residues repeat with period 100.",
]
THINK = [
    "Okay, let me try to solve this. First I'll restate the problem. Hmm, maybe I should try small cases. "
    "If n = 1 we get 3, if n = 2 we get 7, so maybe the pattern is 2^{n+1} - 1. Let me double check with "
    "n = 3: that gives 15, which matches my direct count. Wait, I should be careful about the boundary case.",
    "Alternatively, I can count complements. Total is 120, bad ones are 20, so 100. Hmm, but the question "
    "asks for something else: the remainder modulo 1000 of the sum. Let me recompute the sum carefully.",
]


def cot(rng: random.Random, k: int = 2) -> str:
    return "\n\n".join(rng.sample(COT, k))


# Labels changed by the one-value rule of issue #22 (docs/verifier.md), each with its reason.
ONE_VALUE_RULE: dict[str, tuple[bool, str]] = {
    'c0036': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'c0064': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'c0068': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'c0074': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'c0075': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'c0076': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'c0265': (False, '#22: an integer ground truth (AIME/DAPO) wants the integer written as a number, not an expression of it'),
    'c0131': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0133': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0134': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0136': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0138': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0139': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0141': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0143': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0144': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0146': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0148': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0149': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0163': (False, '#22: two disagreeing commitments in the final output (a revision is a second candidate)'),
    'c0162': (False, '#22: 16 or more marked answers are a flood, not one committed value'),
    'c0285': (False, '#22: 16 or more marked answers are a flood, not one committed value'),
    'c0086': (True, '#22: number words state the value'),
    'c0277': (True, '#22: number words state the value'),
}


# Labels changed again by the commitment rule of issue #32 (docs/verifier.md R5e), each with its reason: #22's
# flood rule refused a value committed many times; a careful grader reads one value repeated as that value.
COMMITMENT_RULE_32: dict[str, tuple[bool, str]] = {
    'c0162': (True, '#32 R5e: the same value committed any number of times is one value (the flood limit only '
                    'bounds reading; disagreeing values in a flood are still two values)'),
    'c0285': (True, '#32 R5a/R5e: a box framed in a box changes only the look; 2000 nested boxes state one value'),
}


def _relabel(rows: list[dict]) -> list[dict]:
    for rule in (ONE_VALUE_RULE, COMMITMENT_RULE_32):
        for r in rows:
            if r["id"] in rule:
                r["label"], why = rule[r["id"]]
                r["note"] = f"{r['note']}; {why}" if r["note"] else why
    return rows


def build() -> list[dict]:
    rng = random.Random(20240)
    rows: list[dict] = []

    def add(shape: str, response: str, gt: str, label: bool, note: str = "", data_source: str = "math_dapo"):
        rows.append(
            {
                "id": f"c{len(rows) + 1:04d}",
                "shape": shape,
                "data_source": data_source,
                "response": response,
                "ground_truth": gt,
                "label": label,
                "note": note,
            }
        )

    # 1. DAPO "Answer:" lines in the shapes models actually write (issue #4's list first).
    dapo_true = [
        ("Answer: 033", "33"),
        ("**Answer:** 33", "33"),
        ("Answer: 33.", "33"),
        ("Answer: 204.0", "204"),
        ("Answer: \\(204\\)", "204"),
        ("Answer: $204$", "204"),
        ("*Answer*: 12", "12"),
        ("ANSWER: 12", "12"),
        ("answer : 12", "12"),
        ("Final Answer: 12", "12"),
        ("Answer：12", "12"),
        ("Answer: \\boxed{12}", "12"),
        ("Answer: 12 degrees", "12"),
        ("Answer: x = 12", "12"),
        ("Answer: \\text{12}", "12"),
        ("Answer: $\\boxed{12}$.", "12"),
        ("**Answer**: 580", "580"),
        ("Answer: **580**", "580"),
        ("Answer: $n = 580$", "580"),
        ("Answer:\n\\[\n\\boxed{580}\n\\]", "580"),
        ("Answer: 580 ways", "580"),
        ("Answer: \\$580", "580"),
        ("Answer: 5\\%", "5"),
        ("Answer: 45^\\circ", "45"),
        ("Answer: 45°", "45"),
        ("Answer: -7", "-7"),
        ("Answer: +7", "7"),
        ("Answer: 0", "0"),
        ("Answer: 000", "0"),
        ("Answer: 7.000", "7"),
        ("Answer: \\textbf{7}", "7"),
        ("Answer: \\mathrm{7}", "7"),
        ("__Answer:__ 7", "7"),
        ("Answer: `7`", "7"),
        ("Answer: 1,000", "1000"),
        ("Answer: \\frac{14}{2}", "7"),
    ]
    for tail, gt in dapo_true:
        add("dapo_answer_line", cot(rng) + "\n\n" + tail, gt, True, "issue #4 answer-line shapes")
    dapo_false = [
        ("Answer: 034", "33"),
        ("**Answer:** 133", "33"),
        ("Answer: 3.3", "33"),
        ("Answer: 204.5", "204"),
        ("Answer: \\(-204\\)", "204"),
        ("Answer: 12", "-12"),
        ("Answer: 330", "33"),
        ("Answer: 3", "33"),
        ("Answer: 333", "33"),
        ("Answer: \\frac{1}{33}", "33"),
        ("Answer: 33^2", "33"),
        ("Answer: 3 3", "33"),
        ("Answer: 0.33", "33"),
        ("Answer: 33/10", "33"),
        ("Answer: x", "33"),
        ("Answer:", "33"),
        ("Answer: \\boxed{}", "33"),
        ("Answer: none", "0"),
        ("Answer: 7.01", "7"),
        ("Answer: 1,00", "100"),
    ]
    for tail, gt in dapo_false:
        add("near_miss", cot(rng) + "\n\n" + tail, gt, False, "near miss or empty answer")

    # 2. \boxed only (Qwen3's habit), no Answer line.
    boxed_true = [
        ("Thus the answer is $\\boxed{33}$.", "33"),
        ("\\[\n\\boxed{33}\n\\]", "33"),
        ("**Final Answer**\n\\[\n\\boxed{33}\n\\]", "33"),
        ("The result is \\fbox{33}.", "33"),
        ("$\\boxed{\\text{33}}$", "33"),
        ("$\\boxed{033}$", "33"),
        ("$\\boxed{33^\\circ}$", "33"),
        ("$\\boxed{\\frac{66}{2}}$", "33"),
        ("$\\boxed{{33}}$", "33"),
        ("\\boxed{40{,}320}", "40320"),
        ("\\boxed{40\\,320}", "40320"),
        ("\\boxed{\\dfrac{99}{3}}", "33"),
        ("\\boxed 33", "33"),
        ("\\boxed{\\mathbf{33}}", "33"),
        ("\\boxed{n=33}", "33"),
        ("so we get \\boxed{-5}.", "-5"),
        ("\\boxed{\\left(33\\right)}", "33"),
        ("\\boxed{2^{5}+1}", "33"),
        ("\\boxed{\\sqrt{1089}}", "33"),
        ("\\boxed{3 \\times 11}", "33"),
    ]
    for tail, gt in boxed_true:
        add("boxed_only", cot(rng) + "\n\n" + tail, gt, True, "boxed with no Answer line")
    boxed_false = [
        ("$\\boxed{34}$", "33"),
        ("$\\boxed{-33}$", "33"),
        ("$\\boxed{33.3}$", "33"),
        ("$\\boxed{3.3}$", "33"),
        ("\\boxed{33", "33"),
        ("\\boxed{33\\sqrt{2}}", "33"),
        ("\\boxed{\\frac{33}{2}}", "33"),
        ("\\boxed{x+33}", "33"),
        ("\\boxed{(33, 1)}", "33"),
        ("\\boxed{\\text{thirty-three}}", "33"),
    ]
    for tail, gt in boxed_false:
        add("boxed_near_miss", cot(rng) + "\n\n" + tail, gt, False, "boxed near miss / unclosed box")

    # 3. Qwen3 thinking output: only the part after </think> counts; an unclosed <think> is truncated.
    for v, w in [(33, 34), (580, 58), (7, 8), (104, 140), (0, 1)]:
        th = " ".join(rng.sample(THINK, 2))
        add(
            "qwen3_think",
            f"<think>\n{th} So maybe it's {w}.\n</think>\n\nAnswer: {v}",
            str(v),
            True,
            "thinking with a different draft; final after </think>",
        )
        add(
            "qwen3_think",
            f"{th} The answer should be {v}.\n</think>\n\n**Final Answer**\n\\[\n\\boxed{{{v}}}\n\\]",
            str(v),
            True,
            "chat template put <think> in the prompt; response starts inside the thought",
        )
        add(
            "qwen3_think",
            f"<think>\n{th} I get \\boxed{{{v}}}.\n</think>\n\nAnswer: {w}",
            str(v),
            False,
            "right value only inside the thinking; the final answer is wrong",
        )
        add(
            "qwen3_truncated",
            f"<think>\n{th} Hmm, so the answer is {v}. Answer: {v}. Let me verify once more",
            str(v),
            False,
            "unclosed <think>: hit the length limit while thinking",
        )
        add(
            "qwen3_truncated",
            f"<think>\n{th}\n</think>\nFirst, \\boxed{{{w}}} ...\n<think>\nwait Answer: {v}",
            str(v),
            False,
            "re-opened think never closed",
        )
        add(
            "qwen3_think",
            f"<think>\n{th}\n</think>\n\nThe sum is {v}, so the answer is $\\boxed{{{v}}}$.",
            str(v),
            True,
            "boxed after </think>",
        )

    # 4. Truncated non-thinking responses (cut mid-sentence by the length limit).
    for v in (12, 45, 100, 7, 64):
        add(
            "truncated",
            cot(rng, 3) + f"\n\nNow we substitute back. The partial sum is {v} and we still need to",
            str(v),
            False,
            "cut off mid-sentence; a number in the reasoning is not an answer",
        )
        add(
            "truncated",
            cot(rng, 2) + f"\n\nSo far we have {v} cases, and then for the remaining ones we",
            str(v),
            False,
            "cut off mid-sentence",
        )

    for v in (12, 300):
        add(
            "truncated",
            cot(rng, 3) + f"\n\nI think the answer is {v}, but let me verify by computing the sum of",
            str(v),
            False,
            "cut off mid-sentence after a tentative 'the answer is'",
        )
        add(
            "truncated",
            cot(rng, 3) + f"\n\nTherefore the count is {v} and the other case gives",
            str(v),
            False,
            "cut off mid-sentence after a conclusion word",
        )

    # 5. Revised answers: last wins (one or two revisions).
    for v, w, u in [(33, 32, 31), (204, 240, 402), (7, 6, 5), (12, 21, 13)]:
        add(
            "revised",
            f"{cot(rng)}\n\nAnswer: {w}\n\nWait, I made an arithmetic slip above. Redoing it:\n\nAnswer: {v}",
            str(v),
            True,
            "revised once; last answer counts",
        )
        add(
            "revised",
            f"{cot(rng)}\n\nAnswer: {w}\n\nWait, I made an arithmetic slip above. Redoing it:\n\nAnswer: {v}",
            str(w),
            False,
            "revised once; the first answer no longer counts",
        )
        add(
            "revised",
            f"Answer: {u}\nHmm no.\nAnswer: {w}\nLet me recheck.\nAnswer: {v}",
            str(v),
            True,
            "revised twice; last answer counts",
        )
        add("revised", f"First guess \\boxed{{{w}}}. Correcting: \\boxed{{{v}}}", str(v), True, "revised box")
        add(
            "revised",
            f"{cot(rng)} Answer: {v}\nTo be sure, the final answer is \\boxed{{{v}}}.",
            str(v),
            True,
            "same answer twice in two forms",
        )

    # 6. Enumerated answers / hedging: wrong even when the right value is among them.
    add("hedging", "\n".join(f"Answer: {i}" for i in range(1000)), "500", False, "Answer: 0 ... Answer: 999")
    add("hedging", "\n".join(f"Answer: {i}" for i in range(1000)), "999", False, "enumeration; last happens to match")
    add("hedging", "Answer: 3\nAnswer: 4\nAnswer: 3\nAnswer: 4", "4", False, "alternating candidates")
    add("hedging", "Answer: 4\nAnswer: 3\nAnswer: 4\nAnswer: 3\nAnswer: 4", "4", False, "alternating candidates")
    add("hedging", " ".join(f"\\boxed{{{i}}}" for i in range(1, 40)), "39", False, "list of boxed candidates")
    add("hedging", "It is \\boxed{1}, \\boxed{2}, \\boxed{3} or \\boxed{4}.", "4", False, "boxed candidates")
    add("hedging", "Answer: 3 or 4", "3", False, "two answers on one line")
    add("hedging", "Answer: 3 or 4", "4", False, "two answers on one line")
    add("hedging", "The answer is 12 or 13.", "12", False, "two answers in prose")
    add("hedging", "\n".join(f"Answer: {i}" for i in (10, 20, 30, 40)), "40", False, "three revisions = listing")
    add("hedging", "\n".join(f"Answer: {i}" for i in range(0, 1000, 7)), "994", False, "stride enumeration")
    add("not_hedging", "\n".join(["Answer: 42"] * 50), "42", True, "same answer repeated is not hedging")
    add("not_hedging", " ".join(["\\boxed{9}"] * 30 + ["\\boxed{42}"]), "42", True, "flood then one change")

    # 7. Thousands separators and their near misses.
    seps = [
        "40{,}320",
        "40\\,320",
        "40,320",
        "40\\!320",
        "40{, }320",
        "40\u2009320",
        "40\u202f320",
        "40,\\!320",
        "\\num{40320}" if False else "40320",
    ]
    for s in seps:
        add("separators", f"{cot(rng)}\n\nAnswer: {s}", "40320", True, "thousands separator")
        add("separators", f"{cot(rng)}\n\nSo the count is $\\boxed{{{s}}}$.", "40320", True, "thousands separator")
    for s in ["1{,}000{,}000", "1,000,000", "1\\,000\\,000", "1\\!000\\!000"]:
        add("separators", f"Answer: {s}", "1000000", True, "millions with separators")
    for s, gt in [
        ("40,32", "4032"),
        ("4,0320", "40320"),
        ("40, 320", "40320"),
        ("(40,320)", "40320"),
        ("40,320", "40"),
        ("1,2345", "12345"),
        ("12,34,567", "1234567"),
        ("1,000", "1"),
    ]:
        add("separators_near_miss", f"Answer: {s}", gt, False, "not a thousands grouping / different value")

    # 8. Leading zeros (AIME answers are 000-999; 033 is 33).
    for s, gt, lab in [
        ("033", "33", True),
        ("007", "7", True),
        ("000", "0", True),
        ("0", "0", True),
        ("-033", "-33", True),
        ("0330", "33", False),
        ("00", "0", True),
        ("\\boxed{009}", "9", True),
    ]:
        add("leading_zeros", f"{cot(rng)}\nAnswer: {s}", gt, lab, "leading zeros")
    add("leading_zeros", "Answer: 33", "033", True, "leading zeros in the ground truth")

    # 9. Units and words after the number.
    for s, gt in [
        ("90 degrees", "90"),
        ("90^\\circ", "90"),
        ("90^{\\circ}", "90"),
        ("90°", "90"),
        ("\\$15", "15"),
        ("15 dollars", "15"),
        ("15\\%", "15"),
        ("12 cm", "12"),
        ("3 hours", "3"),
        ("12\\text{ cm}^2", "12"),
        ("12 \\text{ square units}", "12"),
        ("8 \\mathrm{m}", "8"),
        ("30 minutes", "30"),
        ("5 \\text{ ways}", "5"),
        ("€20", "20"),
        ("20 students", "20"),
    ]:
        add("units", f"{cot(rng)}\n\nAnswer: {s}", gt, True, "units after the number")
    for s, gt in [("90 degrees", "9"), ("15\\%", "0.15"), ("12 cm", "120"), ("3 hours", "180")]:
        add("units_near_miss", f"Answer: {s}", gt, False, "units do not convert the value")

    # 10. Near misses around the right answer.
    for v in (33, 7, 128, 999):
        for w in (v + 100, -v, v * 10, v + 1, v - 1):
            add("near_miss", f"{cot(rng)}\n\nAnswer: {w}", str(v), False, f"{w} vs {v}")
        add("near_miss", f"Answer: {v}.5", str(v), False, "decimal part")
        add("near_miss", f"\\boxed{{{v}}}", str(-v), False, "sign")

    # 11. Prose answers (no marker the DAPO parser knows).
    prose = [
        ("The answer is 42.", "42", True),
        ("Therefore, the total is 42.", "42", True),
        ("So there are 42 ways to do it.", "42", True),
        ("Hence the minimum value is $42$.", "42", True),
        ("42", "42", True),
        ("x = 42", "42", True),
        ("$42$", "42", True),
        ("We compute 6 * 7.\n42", "42", True),
        ("The final result is 42", "42", True),
        ("Step 1: add.\nStep 2: multiply.\n#### 42", "42", True),
        ("The answer is 41.", "42", False),
        ("just a number 42", "42", False),
        ("I think so", "42", False),
        ("The answer is unclear.", "42", False),
        ("Thus the area is $\\frac{84}{2}$.", "42", True),
        ("Therefore $n = 42$.", "42", True),
        ("所以答案是42。", "42", True),
        ("因此，一共有42个。", "42", True),
        ("Donc, la réponse est 42.", "42", True),
        ("Therefore, the answer is 24.", "42", False),
        ("The answer is 5, 6, 7.", "5", False),
        ("Answer: the possible values are 3 and 4.", "3", False),
        ("The answer is 12,000.", "12000", True),
        ("#### Step 1: set up\nLet x = 3.\n#### Step 2: solve\nSo $\\boxed{42}$.", "42", True),
        ("#### Final Result\n\\[\\boxed{42}\\]", "42", True),
        ("**Answer:** see the computation below.\n\n$6 \\times 7 = 42$, so \\boxed{42}.", "42", True),
        ("Answer: \\text{forty-two}", "42", False),
    ]
    for resp, gt, lab in prose:
        add("prose", resp, gt, lab, "answer in prose")

    # 12. Hostile inputs.
    add("hostile", "", "42", False, "empty response")
    add("hostile", "Answer: 42", "", False, "empty ground truth")
    add("hostile", "", "", False, "empty never matches empty")
    add("hostile", "Answer: ", "", False, "empty answer vs empty ground truth")
    add("hostile", "   \n\t  ", "0", False, "whitespace")
    add("hostile", "{" * 5000 + "42" + "}" * 5000, "42", False, "5000 nested braces, no answer marker")
    add("hostile", "\\boxed{" + "{" * 5000 + "42" + "}" * 5001, "42", False, "box around 5000 nested braces")
    add("hostile", "\\boxed{" * 2000 + "42" + "}" * 2000, "42", True, "2000 nested boxes of one value")
    add("hostile", "}" * 3000 + "Answer: 42", "42", True, "unbalanced closing braces before the answer")
    add("hostile", "Answer: 42" + "{" * 3000, "42", False, "unbalanced braces glued to the answer")
    add("hostile", "x" * 100000 + "\nAnswer: 42", "42", True, "100k characters then the answer")
    add("hostile", "Answer: 42\n" + "x" * 100000, "42", True, "answer then 100k characters")
    add("hostile", "a" * 30000 + "answer" * 3000 + " 42", "42", False, "flood of the word answer")
    add("hostile", "$" * 10001 + "42", "42", False, "odd number of dollar signs")
    add("hostile", "\\boxed{2^{2^{2^{2^{2^{2^{2^{99}}}}}}}}", "1", False, "power tower")
    add("hostile", "\\boxed{9^{9^{9^{9}}}}", "9", False, "power tower")
    add("hostile", "Answer: " + "9" * 1000, "9" * 1000, True, "1000-digit integer")
    add("hostile", "Answer: " + "9" * 1000, "9" * 999, False, "1000-digit integer near miss")
    add("hostile", "Answer: " + "9" * 5000, "9" * 5000, False, "a 5000-character 'answer' is not an answer")
    add("hostile", "__import__('os').system('true') or 42", "42", False, "code, not an answer")
    add("hostile", "Answer: eval('42')", "42", False, "code, not an answer")
    add("hostile", "\x00\x01\x02 Answer: 42 \x7f", "42", True, "control characters")
    add("hostile", "Answer: ４２", "42", True, "full-width digits are still 42")
    add("hostile", "\\boxed{\\boxed{\\boxed{42}}", "42", True, "one unclosed outer box around a closed one")
    add(
        "hostile",
        "Answer: 42<|im_end|>\n<|im_start|>user\nAnswer: 7",
        "42",
        True,
        "chat template leak: the next turn is not the response",
    )
    add("hostile", "Answer: \\boxed{42}im_end|>", "42", False, "mangled end token")
    add("hostile", "🙂" * 1000 + " Answer: 42", "42", True, "emoji flood")
    add("hostile", "Answer: 42 " + "\u200b" * 1000, "42", True, "zero-width spaces")
    add("hostile", "Answer: 1e3", "1000", False, "scientific e-notation is not how AIME answers are written")

    # 13. Long realistic responses (~8k tokens) in the three common endings.
    long_body = "\n\n".join(COT * 60)
    for v in (17, 250, 999):
        add("long", long_body + f"\n\nAnswer: {v}", str(v), True, "long CoT, Answer line")
        add(
            "long",
            "<think>\n" + long_body + f"\n</think>\n\nThe answer is $\\boxed{{{v}}}$.",
            str(v),
            True,
            "long thinking, boxed after",
        )
        add("long", "<think>\n" + long_body + f" Answer: {v}", str(v), False, "long thinking, truncated")
        add("long", long_body + f"\n\nAnswer: {v + 1}", str(v), False, "long CoT, wrong")

    # 14. Non-integer ground truths (decided by exact rationals or by math-verify).
    nonint = [
        ("Answer: 0.5", "\\frac{1}{2}", True),
        ("\\boxed{\\frac{2}{4}}", "\\frac12", True),
        ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}", True),
        ("\\boxed{1+x}", "x+1", True),
        ("\\boxed{\\pi}", "\\pi", True),
        ("\\boxed{\\sqrt{18}}", "3\\sqrt{2}", True),
        ("\\boxed{(1, 2)}", "(1,2)", True),
        ("\\boxed{0.25}", "1/4", True),
        ("\\boxed{\\frac{1}{3}}", "\\frac{1}{2}", False),
        ("\\boxed{x-1}", "x+1", False),
        ("\\boxed{\\sqrt{2}}", "\\sqrt{3}", False),
        ("Answer: 0.33", "\\frac{1}{3}", False),
        ("\\boxed{2\\pi}", "\\pi", False),
        ("\\boxed{(2, 1)}", "(1,2)", False),
    ]
    for resp, gt, lab in nonint:
        add("non_integer_gt", resp, gt, lab, "non-integer ground truth", data_source="aime_2024")

    # 15. The arith data source of the tiny native demo: last `Answer: N` line, else a bare-integer first line.
    for resp, gt, lab in [
        ("7", "7", True),
        ("Answer: 7", "7", True),
        (" 7\n", "7", True),
        ("-3", "-3", True),
        ("8", "7", False),
        ("7.5", "7", False),
        ("seven", "7", False),
        ("", "7", False),
        ("12 + 5 = 17\nAnswer: 17", "17", True),
        ("Answer: 71", "7", False),
        ("7\n8 9 10 11", "7", True),
        ("7\n8 9 10 11", "8", False),
        ("Answer: 7\nAnswer: 9", "9", True),
        ("3 + 4 = 7", "7", False),
    ]:
        add("arith", resp, gt, lab, "synthetic arithmetic", data_source="arith")

    # 16. aime / default data sources use the same judgement on common shapes.
    for ds in ("aime24", "aime-2025", "math", "openai/gsm8k"):
        add("data_source", f"{cot(rng)}\n\nAnswer: 073", "73", True, f"data_source={ds}", data_source=ds)
        add("data_source", f"{cot(rng)}\n\n$\\boxed{{73}}$", "73", True, f"data_source={ds}", data_source=ds)
        add("data_source", f"{cot(rng)}\n\n$\\boxed{{37}}$", "73", False, f"data_source={ds}", data_source=ds)
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

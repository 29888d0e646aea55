"""Build tests/rewards/data/last_commit_suite.jsonl: what a response commits to last, in any clean form (issue #42).

Every label is set by hand from the rule in docs/verifier.md (R0-R5 with #42's clauses), never by running a
verifier; each row names the clause that decides it (`clause`) and why (`note`). The cases were written, and
committed, before the verifier was run on them.

Families (issue #42): after a right `Answer:` line, a correction or erratum that changes the value, an
alternative offered conditionally in words, working that ends committed to another value, doubt proposing
another value, an explicit withdrawal (all wrong); and, each an unambiguous commitment to the right value, a box
on a named intermediate quantity followed by the asked value, an answer header over bullet-listed components, a
base subscript, an equation tag, a footnote marker, braces around a minus sign, a sentence that begins with the
value, the sign in words, unit and number macros, an Answer line with a trailing remark or comment, a markdown
link, a multiple-choice letter with its value, answer tags, "the answer is X, not Y", an end-of-proof mark, the
label inside the box, "Final"-style labels, a parenthesised Answer line, an HTML comment before the Answer line.
Each right form has a control with the wrong value (wrong), so a reader that pays the form blindly fails.
Deterministic: `python tests/rewards/build_last_commit_suite.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).parent / "data" / "last_commit_suite.jsonl"

# (data_source, truth, wrong value, wrong value in words, two named components (name, value), the asked
#  quantity, thinking)
PROBLEMS = [
    ("aime2024", "23", "32", "thirty-two", (("p", "7"), ("q", "16")), "p + q",
     "The point is $C = (\\frac{1}{8}, \\frac{3\\sqrt{3}}{8})$, so $OC^2 = \\frac{7}{16}$ and $p + q = 23$."),
    ("aime2024", "699", "696", "six hundred ninety-six", (("Q", "5"), ("R", "694")), "Q + R",
     "The greatest such number is $N = 5694$, so $Q = 5$, $R = 694$ and $Q + R = 699$."),
    ("aime2025", "279", "297", "two hundred ninety-seven", (("N", "2304"), ("M", "2025")), "N - M",
     "Eight-digit permutations divisible by 22 number $N = 2304$, and $N - 2025 = 279$."),
    ("aime2024", "294", "296", "two hundred ninety-six", (("a", "21"), ("b", "7")), "N",
     "Splitting the steps gives $a = \\binom{7}{2} = 21$ and $b = 7$; both orders: $2ab = 294$."),
    ("math_dapo", "30", "36", "thirty-six", (("p", "2"), ("r", "5")), "n",
     "The least product of three distinct primes is $2 \\cdot 3 \\cdot 5 = 30$."),
    ("math_dapo", "64", "46", "forty-six", (("a_1", "2"), ("r", "2")), "a_6",
     "The sequence doubles from 2: 2, 4, 8, 16, 32, 64."),
]
SUMMARY = "The count follows from the case analysis above."

# (shape, clause, template, label, note). «g» truth, «w» wrong, «ww» wrong in words, «n1»/«v1», «n2»/«v2» the
# components, «q» the asked quantity. Every template is applied to every problem.
T = [
    # --- paid before #42: after a right Answer line, something that changes or voids it (all wrong)
    ("correction", "R3", "Answer: «g»\n\nCorrection: the answer is «w».", False, "a correction changes the value"),
    ("correction", "R3", "Answer: «g»\n\nErratum: the final value should be «w».", False, "an erratum changes it"),
    ("correction", "R3", "Answer: «g»\n\nCorrection: I mis-added the last case; the total is «w».", False,
     "a correction changes the value"),
    ("correction_control", "R3", "Answer: «w»\n\nCorrection: the answer is «g».", True,
     "the correction is what the response commits to last"),
    ("conditional_alt", "R2c", "Answer: «g»\n\nIf the order of the two parts does not matter, the answer is «ww» "
     "instead.", False, "another value offered conditionally, in words, after the answer: a candidate"),
    ("conditional_alt", "R2c", "Answer: «g»\n\nOr, if the endpoints are counted too, «ww».", False,
     "an alternative in words after the answer"),
    ("conditional_alt_control", "R2b", "Answer: «g»\n\nIf the endpoints were counted too, the count of points would "
     "be different.", True, "a counterfactual naming no value"),
    ("working_after", "R1e", "Answer: «g»\n\nLet me recount to be sure. Adding the two cases again gives a different "
     "split, so the total is «w».", False, "working after the answer ends committed to another value"),
    ("working_after", "R1e", "Answer: «g»\n\nRechecking the largest case, it contributes one more block. Therefore "
     "the answer is «w».", False, "the response ends committed to another value"),
    ("working_after_control", "R1e", "Answer: «g»\n\nRechecking the largest case changes nothing. Therefore the "
     "answer is «g».", True, "working after the answer ends at the same value"),
    ("doubt_after", "R2c", "Answer: «g»\n\nHmm, I am not fully sure about this; it could well be «w».", False,
     "doubt proposing another value"),
    ("doubt_after", "R2c", "Answer: «g»\n\nOn second thought, «w» seems more plausible.", False,
     "doubt proposing another value"),
    ("doubt_after", "R2c", "Answer: «g»\n\nI wonder whether the answer should be «w» instead.", False,
     "doubt proposing another value"),
    ("withdrawal", "R3", "Answer: «g»\n\nI withdraw this answer; the case analysis has a gap.", False,
     "an explicit withdrawal leaves no final value"),
    ("withdrawal", "R3", "Answer: «g»\n\nPlease disregard my answer above, I could not verify it.", False,
     "an explicit withdrawal leaves no final value"),
    ("withdrawal", "R3", "Answer: «g»\n\nActually, I retract this answer.", False, "a retraction leaves no value"),
    ("after_line", "R2e", "Answer: «g», or rather «w» after rechecking", False,
     "the line ends committed to another value"),
    ("after_line", "R2e", "Answer: «g» — no wait, «w»", False,
     "the line withdraws its value for another"),
    # --- not paid before #42: an unambiguous commitment to the right value (controls: the wrong value)
    ("named_box", "R1f", "So $«n1» = \\boxed{«v1»}$ and $«n2» = «v2»$.\n\nAnswer: «g»", True,
     "a box on a named intermediate quantity is not a commitment to the answer; the last marked answer decides"),
    ("named_box", "R1f", "We get $\\boxed{«n1» = «v1»}$ and $\\boxed{«n2» = «v2»}$, hence $«q» = «g»$.\n\n"
     "Answer: «g»", True, "boxes on named components, then the asked value"),
    ("named_box_control", "R1f", "So $«n1» = \\boxed{«v1»}$ and $«n2» = «v2»$.\n\nAnswer: «w»", False,
     "the last marked answer is the wrong value"),
    ("named_box_control", "R4.1", "So $\\boxed{«v1»}$ is the first part.\n\nAnswer: «g»", False,
     "an unnamed box is a commitment: two values"),
    ("bullets", "R1f", "**Answer:**\n- $«n1» = «v1»$\n- $«n2» = «v2»$\n- $«q» = «g»$", True,
     "a header over bullet-listed components ending in the asked quantity"),
    ("bullets_control", "R1f", "**Answer:**\n- $«n1» = «v1»$\n- $«n2» = «v2»$\n- $«q» = «w»$", False,
     "the last item is the wrong value"),
    ("tag", "R5a", "$$\\boxed{«g»} \\tag{1}$$", True, "an equation tag is a look"),
    ("tag", "R5a", "Answer: $«g» \\tag{*}$", True, "an equation tag is a look"),
    ("tag_control", "R5a", "$$\\boxed{«w»} \\tag{1}$$", False, "the wrong value with a tag"),
    ("footnote", "R5a", "Answer: «g»[^1]\n\n[^1]: Both orders of the runs are counted.", True,
     "a footnote marker is a look"),
    ("footnote", "R5a", "Answer: «g»\\footnote{Both orders are counted.}", True, "a footnote is a look"),
    ("footnote_control", "R5a", "Answer: «w»[^1]\n\n[^1]: Both orders of the runs are counted.", False,
     "the wrong value with a footnote"),
    ("value_first", "R1b", "«g» is the answer.", True, "a sentence that begins with the value"),
    ("value_first", "R1b", "«g» is the final answer.", True, "a sentence that begins with the value"),
    ("value_first_control", "R1b", "«w» is the answer.", False, "the wrong value first"),
    ("unit_macro", "R5a", "Answer: \\num{«g»}", True, "siunitx \\num is a look"),
    ("unit_macro", "R5a", "Answer: $\\SI{«g»}{\\centi\\metre}$", True, "a unit never changes the value"),
    ("unit_macro", "R5a", "Answer: $\\qty{«g»}{cm}$", True, "a unit never changes the value"),
    ("unit_macro", "R5a", "Answer: $«g»\\,\\si{cm}$", True, "a unit never changes the value"),
    ("unit_macro_control", "R5a", "Answer: \\num{«w»}", False, "the wrong value in a macro"),
    ("line_remark", "R2e", "Answer: «g» (as computed above)", True,
     "a remark naming no value"),
    ("line_remark", "R2e", "Answer: «g» <!-- checked twice -->", True, "a comment is no statement"),
    ("line_remark", "R2e", "Answer: «g» — this follows from the case count.", True, "a remark naming no value"),
    ("line_remark_control", "R2e", "Answer: «w» (as computed above)", False, "the wrong value with a remark"),
    ("link", "R5a", "Answer: [«g»](#solution)", True, "a markdown link around the value is a look"),
    ("link_control", "R5a", "Answer: [«w»](#solution)", False, "the wrong value in a link"),
    ("choice", "R5a", "Answer: (B) «g»", True, "a multiple-choice letter with its value"),
    ("choice", "R5a", "\\boxed{\\text{(C) } «g»}", True, "a multiple-choice letter with its value"),
    ("choice_control", "R5a", "Answer: (B) «w»", False, "a letter with the wrong value"),
    ("answer_tag", "R1a", "<answer>«g»</answer>", True, "answer tags mark the answer"),
    ("answer_tag", "R1a", "<answer>\n«g»\n</answer>", True, "answer tags mark the answer"),
    ("answer_tag_control", "R1a", "<answer>«w»</answer>", False, "the wrong value in tags"),
    ("not_other", "R2b", "The answer is «g», not «w».", True, "a negated other value holds for it"),
    ("not_other", "R2b", "Answer: «g», not «w»", True, "a negated other value holds for it"),
    ("not_other_control", "R2b", "The answer is «w», not «g».", False, "commits to the wrong value"),
    ("qed", "R5a", "Answer: «g»\n\n∎", True, "an end-of-proof mark is no statement"),
    ("qed", "R5a", "Answer: «g» $\\blacksquare$", True, "an end-of-proof mark is no statement"),
    ("qed", "R5a", "Answer: «g»\n\n$\\square$", True, "an end-of-proof mark is no statement"),
    ("qed_control", "R5a", "Answer: «w»\n\n∎", False, "the wrong value with a mark"),
    ("label_in_box", "R1a", "$\\boxed{\\text{Answer: } «g»}$", True, "the label inside the box"),
    ("label_in_box", "R1a", "\\boxed{\\textbf{Final Answer:} «g»}", True, "the label inside the box"),
    ("label_in_box_control", "R1a", "$\\boxed{\\text{Answer: } «w»}$", False, "the wrong value"),
    ("final_label", "R1a", "Final answer «g»", True, "a Final-style label without a colon"),
    ("final_label", "R1a", "**Final Answer** — «g»", True, "a Final-style label with a dash"),
    ("final_label", "R1a", "Final answer - «g»", True, "a Final-style label with a dash"),
    ("final_label", "R1a", "Final: «g»", True, "a Final label"),
    ("final_label_control", "R1a", "Final answer — «w»", False, "the wrong value"),
    ("paren_line", "R1a", "(Answer: «g»)", True, "a parenthesised Answer line"),
    ("paren_line_control", "R1a", "(Answer: «w»)", False, "the wrong value"),
    ("html_comment", "R1a", "<!-- final answer below -->\nAnswer: «g»", True, "a comment before the line"),
    ("html_comment", "R1a", "<!-- checked -->Answer: «g»", True, "a comment before the line"),
    ("html_comment_control", "R1a", "<!-- final answer below -->\nAnswer: «w»", False, "the wrong value"),
    ("emphasis", "R5a", "Answer: ***«g»***", True, "emphasis is a look"),
    ("number_words", "R5d", "Answer: «ww»", False, "the wrong value in words"),
]

# Forms that need a particular truth: (shape, clause, data_source, truth, final output, label, note).
SPECIAL = [
    ("base_subscript", "R5g", "math_dapo", "10110", "Answer: $10110_2$", True, "a base subscript is a look"),
    ("base_subscript", "R5g", "math_dapo", "10110", "\\boxed{10110_{2}}", True, "a base subscript is a look"),
    ("base_subscript", "R5g", "math_dapo", "1253", "Answer: $1253_7$", True, "a base subscript is a look"),
    ("base_subscript", "R5g", "math_dapo", "1253", "Answer: $1253_{7}$", True, "a base subscript is a look"),
    ("base_subscript_control", "R5g", "math_dapo", "1253", "Answer: $1254_7$", False, "another digit string"),
    ("base_subscript_control", "R5g", "math_dapo", "22", "Answer: $10110_2$", False,
     "read as the digits written, not converted"),
    ("sign_braces", "R5c", "math_dapo", "-5", "\\boxed{{-}5}", True, "braces around the sign are a look"),
    ("sign_braces", "R5c", "math_dapo", "-12", "Answer: ${-}12$", True, "braces around the sign are a look"),
    ("sign_braces_control", "R5c", "math_dapo", "5", "\\boxed{{-}5}", False, "the signed number is -5"),
    ("sign_word", "R5d", "math_dapo", "-5", "Answer: negative five", True, "the sign in words"),
    ("sign_word", "R5d", "math_dapo", "-5", "Answer: minus 5", True, "the sign in words"),
    ("sign_word", "R5d", "math_dapo", "-12", "The answer is negative 12.", True, "the sign in words"),
    ("sign_word_control", "R5d", "math_dapo", "5", "Answer: negative five", False, "the signed number is -5"),
    ("sign_word_control", "R5d", "math_dapo", "12", "Answer: minus 12", False, "the signed number is -12"),
]


def _think(thinking: str) -> str:
    return f"<think>\nOkay, let me work through this.\n{thinking}\nI think that is it.\n</think>\n\n{SUMMARY}\n\n"


def build() -> list[dict]:
    rows: list[dict] = []
    for shape, clause, tpl, label, note in T:
        for src, g, w, ww, ((n1, v1), (n2, v2)), q, thinking in PROBLEMS:
            final = tpl
            for k, v in (("«g»", g), ("«ww»", ww), ("«w»", w), ("«n1»", n1), ("«v1»", v1), ("«n2»", n2),
                         ("«v2»", v2), ("«q»", q)):
                final = final.replace(k, v)
            rows.append({"shape": shape, "clause": clause, "data_source": src, "response": _think(thinking) + final,
                         "ground_truth": g, "label": label, "note": note})
    for shape, clause, src, g, final, label, note in SPECIAL:
        rows.append({"shape": shape, "clause": clause, "data_source": src,
                     "response": _think("Converting digit by digit gives the number.") + final, "ground_truth": g,
                     "label": label, "note": note})
    return [{"id": f"l{i + 1:04d}", **r} for i, r in enumerate(rows)]


def main() -> None:
    rows = build()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} cases -> {OUT}")


if __name__ == "__main__":
    main()

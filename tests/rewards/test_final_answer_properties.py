"""Properties of the final-answer rule (issue #14), checked on generated responses with hypothesis.

1. A response with no final-answer form scores wrong, whatever its body says and whatever the ground truth,
   even when the ground truth is written all over the body.
2. Junk appended after a final answer (text with no answer marker, box or refusal in it) never turns a correct
   verdict into another answer: the prediction stays the ground truth.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gspo_cli.rewards import compute_score, cues

# Body words: no answer/result words, no conclusion words ("so", "thus", ...), no refusal words.
WORDS = ["the", "tiles", "area", "square", "we", "count", "each", "row", "move", "flips", "case", "pairs", "sum",
         "of", "and", "with", "first", "second", "side", "divide", "by", "gives", "equals", "remaining", "consider"]
MATH = ["$x^2 + 1$", "$\\frac{a}{b}$", "$n \\ge 3$", "\\sqrt{2}", "$(a+b)^2$", "=", "+", "\\cdot", "$36$"]
# Endings that state no final answer: the response goes on, is cut off, refuses, or leaves the answer empty.
NON_FINAL_ENDINGS = [
    "\n\nNext we consider the remaining cases, which need more work.",
    "\n\nLet me double check the second case before going further.",
    " Now we count the pairs with the",  # cut off mid-sentence by the length limit
    "\n\nI cannot determine the answer.",
    "\n\nThe answer cannot be determined from the given information.",
    "\n\nAnswer: \\boxed{}",
    "\n\nAnswer:",
    "\n\n\\boxed{",
    "\n\n$\\boxed{ }$",
]


@st.composite
def bodies(draw, gt: int) -> str:
    """Sentences of words, formulas and numbers, the ground truth among them."""
    sentences = []
    for _ in range(draw(st.integers(1, 6))):
        toks = draw(st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(MATH),
                                       st.integers(0, 999).map(str), st.just(str(gt))), min_size=3, max_size=14))
        sentences.append(" ".join(toks).capitalize() + ".")
    return " ".join(sentences)


@settings(max_examples=300, deadline=None, database=None)
@given(st.integers(0, 999).flatmap(lambda gt: st.tuples(st.just(gt), bodies(gt), st.sampled_from(NON_FINAL_ENDINGS))),
       st.sampled_from(["math_dapo", "aime24", "other"]), st.booleans())
def test_no_final_answer_form_scores_wrong(case, data_source, thinking):
    gt, body, ending = case
    response = body + ending
    if thinking:  # the ground truth stated only inside the thinking does not count either
        response = f"<think>\nThe answer is {gt}.\nAnswer: {gt}\n</think>\n\n" + response
    res = compute_score(data_source, response, str(gt))
    assert not res["acc"], (response, res)


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(0, 999), st.sampled_from(["math_dapo", "aime24", "other"]))
def test_unclosed_thinking_scores_wrong(gt, data_source):
    response = f"<think>\nSo the answer is {gt}.\n\nAnswer: {gt}\n\\boxed{{{gt}}}"
    assert not compute_score(data_source, response, str(gt))["acc"]


# Junk: any text without an answer marker ("answer", "box", "####", "<think>"), refusal words or prose
# conclusions' value-bearing markers ("thus": since #42 a concluding statement after the answer is what the response
# commits to last, docs/verifier.md R1e); digits, LaTeX and punctuation are all allowed.
JUNK_ALPHABET = "abcdefghijklmpqrstuvxyz ABCDEFGHIJKLMPQRSTUVXYZ0123456789.,;:!?()[]{}=+-*/^_\\$%'\"\n\t"
_FORBIDDEN = ("nswer", "NSWER", "box", "BOX", "ot", "OT", "n't", "N'T", "nable", "NABLE", "nsuff", "NSUFF", "now", "NOW",
              "hus", "HUS")


def _junk_ok(s: str) -> bool:
    """No marker, refusal, retraction, and no candidate offered (#32: a hedge, a question or an alternative with
    a value after the answer is a second candidate; `test_commitment_property` covers those)."""
    low = s.lower()
    if any(f.lower() in low for f in _FORBIDDEN) or "?" in s:
        return False
    return not cues.classes(s) & {cues.ALT, cues.ALT_NEAR, cues.HEDGE, cues.RETRACT}


JUNK = st.text(alphabet=JUNK_ALPHABET, max_size=400).filter(_junk_ok)
FINAL = [
    ("math_dapo", "Work.\n\nAnswer: {gt}"),
    ("math_dapo", "Work.\n\n**Answer:** $\\boxed{{{gt}}}$"),
    ("aime24", "<think>\nhmm\n</think>\n\nThe total is $\\boxed{{{gt}}}$."),
    ("other", "We conclude.\n\n\\[\\boxed{{{gt}}}\\]"),
    ("other", "Answer: \\(\\dfrac{{{twice}}}{{2}}\\)"),
]


@settings(max_examples=400, deadline=None, database=None)
@given(st.integers(0, 999), st.sampled_from(FINAL), JUNK)
def test_junk_after_a_final_answer_never_changes_it(gt, final, junk):
    data_source, template = final
    response = template.format(gt=gt, twice=2 * gt)
    before = compute_score(data_source, response, str(gt))
    assert before["acc"], (response, before)
    after = compute_score(data_source, response + "\n" + junk, str(gt))
    # no marker, box or refusal in the junk: the final answer stays the final answer
    assert after["acc"] and after["pred"] == before["pred"] == str(gt), (junk, after)

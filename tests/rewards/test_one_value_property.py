"""The one-value rule (issue #22) as a property: a response whose final output commits to two different values
is never accepted, whatever the formatting, the order, the text around them, and whichever one is right."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gspo_cli.rewards import compute_score

# Ways to commit to a value v in the final output.
FORMS = [
    "Answer: {v}", "**Answer:** {v}", "Final Answer: {v}", "ANSWER: {v}", "\\boxed{{{v}}}", "$\\boxed{{{v}}}$",
    "\\[\n\\boxed{{{v}}}\n\\]", "**Final Answer**\n\\[\n\\boxed{{{v}}}\n\\]", "The answer is {v}.",
    "The final answer is ${v}$.", "Answer: $\\boxed{{{v}}}$", "\\fbox{{{v}}}", "Answer: **{v}**",
    "Thus, the answer is $\\boxed{{{v}}}$.", "Answer: {v} (that is, the count)",
]
# Text between and around the two commitments (no negation, condition or example cue).
FILLERS = ["", "\n\n", "\nWait, let me recheck the count.\n", " Rechecking: ", "\n\nLet me verify once more.\n\n",
           "\nHmm.\n", " ", "\n\nActually, recomputing the last case:\n\n"]
THINK = ["", "<think>\nLet me compute carefully. The total is 12 + 30.\n</think>\n\n"]
DATA_SOURCES = ["math_dapo", "aime2024", "aime2025", "deepscaler"]


@settings(max_examples=400, deadline=None)
@given(gt=st.integers(0, 2024), delta=st.integers(1, 900), right_first=st.booleans(),
       first=st.sampled_from(FORMS), second=st.sampled_from(FORMS), between=st.sampled_from(FILLERS),
       after=st.sampled_from(FILLERS[:3]), think=st.sampled_from(THINK), ds=st.sampled_from(DATA_SOURCES))
def test_two_different_committed_values_are_never_accepted(gt, delta, right_first, first, second, between, after,
                                                             think, ds):
    wrong = gt + delta
    a, b = (gt, wrong) if right_first else (wrong, gt)
    response = think + "We count the cases.\n\n" + first.format(v=a) + between + second.format(v=b) + after
    assert not compute_score(ds, response, str(gt))["acc"], response


@settings(max_examples=200, deadline=None)
@given(gt=st.integers(0, 2024), first=st.sampled_from(FORMS), second=st.sampled_from(FORMS),
       between=st.sampled_from(FILLERS), think=st.sampled_from(THINK), ds=st.sampled_from(DATA_SOURCES))
def test_the_same_value_committed_twice_is_accepted(gt, first, second, between, think, ds):
    response = think + "We count the cases.\n\n" + first.format(v=gt) + between + second.format(v=gt)
    assert compute_score(ds, response, str(gt))["acc"], response


@pytest.mark.parametrize("gt", [0, 12, 2024])
def test_an_answer_line_glued_to_a_sentence_boxing_the_same_value(gt):
    """Found by the property above (8 of its 28,800 form combinations): `Answer: 12Thus, the answer is
    $\\boxed{12}$.`, the filler empty, was read as the text `12Thus, the answer is $` and scored wrong; the line's
    value is its box's. A different boxed value stays a conflict."""
    glued = "We count the cases.\n\nAnswer: {a}Thus, the answer is $\\boxed{{{b}}}$."
    assert compute_score("math_dapo", glued.format(a=gt, b=gt), str(gt))["acc"] is True
    assert compute_score("math_dapo", glued.format(a=gt, b=gt + 1), str(gt))["acc"] is False


@pytest.mark.parametrize("text", [
    "Hence there are 34 ways, where 3 of them are symmetric.\n\n**Answer: 34**",
    "Thus there are 5 configurations so far, and n >= 7.\n\nAnswer: 34",
])
def test_a_conclusion_naming_several_numbers_is_not_a_second_commitment(text):
    """It states no single value; the marked answer decides (and a hedge in it gains nothing: only that is paid)."""
    assert compute_score("math_dapo", "<think>x</think>" + text, "34")["acc"] is True
    assert compute_score("math_dapo", "<think>x</think>" + text, "7")["acc"] is False

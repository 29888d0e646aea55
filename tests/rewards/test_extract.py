"""Extraction, normalisation and judging: the rules of issue #4, one behaviour per test."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gspo_cli.rewards import compute_score, extract, extract_answer, get_scorer, normalize
from gspo_cli.rewards.normalize import TOO_BIG, evaluate
from gspo_cli.rewards.score import DEFAULT_SCORER, SCORERS, score_arith, scorer_for


def acc(resp, gt, ds="math_dapo"):
    return compute_score(ds, resp, gt)["acc"]


@pytest.mark.parametrize(
    "resp",
    [
        "Answer: 033",
        "**Answer:** 33",
        "Answer: 33.",
        "Answer: 33.0",
        "Answer: \\(33\\)",
        "... so \\boxed{33}",
        "Answer: $\\boxed{33}$",
        "ANSWER : 33",
        "Answer：33",
    ],
)
def test_issue_shapes_are_right(resp):
    assert acc(resp, "33")


def test_dapo_style_prefers_answer_line_boxed_style_prefers_box():
    text = "\\boxed{5}\nAnswer: 5"
    assert extract(text, "dapo").how == "answer_line" and extract(text, "boxed").how == "boxed"
    assert extract("\\boxed{4}\nAnswer: 5", "dapo").how == "conflict"  # two values (issue #22), not a preference
    with pytest.raises(ValueError):
        extract("x", "nope")


def test_boxed_nested_braces_and_fbox():
    assert normalize(extract_answer("\\boxed{\\frac{1}{\\sqrt{4}}}", "boxed")) == "0.5"
    assert extract_answer("\\fbox{12}", "boxed") == "12"
    assert extract_answer("\\boxed 12", "boxed") == "12"


def test_thinking_only_after_close_and_unclosed_is_truncated():
    assert acc("<think>Answer: 1</think>\nAnswer: 2", "2")
    assert not acc("<think>Answer: 2</think>\nAnswer: 1", "2")
    assert extract("<think> Answer: 2", "dapo").how == "unclosed_think"
    assert extract("ok</think> Answer: 2", "dapo").answer == "2"


def test_a_revision_in_the_final_output_is_two_commitments():
    # issue #22: disagreeing commitments anywhere in the final output are wrong, whichever one is right
    assert not acc("Answer: 1\nAnswer: 2", "2")
    assert not acc("Answer: 1\nAnswer: 2", "1")
    assert not acc("Answer: 3\nAnswer: 4\nAnswer: 3\nAnswer: 4", "4")
    assert extract("Answer: 1\nAnswer: 2", "dapo").how == "conflict"
    assert extract("\n".join(f"Answer: {i}" for i in range(1000)), "dapo").how == "too_many_answers"
    assert acc("Answer: 7\n" * 3, "7")  # the same value committed again is one value
    assert acc("<think>Answer: 6</think>\nAnswer: 7", "7")  # a candidate inside the thinking is not final output


def test_empty_never_matches():
    assert not acc("", "")
    assert not acc("Answer: ", "")
    assert not acc("\\boxed{}", "")
    assert not acc("Answer: 0", "")


@pytest.mark.parametrize(
    "raw,norm",
    [
        ("$40{,}320$", "40320"),
        ("40\\,320", "40320"),
        ("40\\!320", "40320"),
        ("40\u2009320", "40320"),
        ("1,234,567", "1234567"),
        ("+7", "7"),
        ("-007", "-7"),
        ("204.0", "204"),
        ("\\text{12}", "12"),
        ("\\textbf{12}", "12"),
        ("\\mathrm{12}", "12"),
        ("**12**", "12"),
        ("12.", "12"),
        ("90^\\circ", "90"),
        ("90 degrees", "90"),
        ("\\$15", "15"),
        ("15\\%", "15"),
        ("\\[ 12 \\]", "12"),
        ("\\(-3\\)", "-3"),
        ("x = 5", "5"),
        ("1.50", "1.5"),
        ("1/3", "1/3"),
        ("-0.125", "-0.125"),
        (".5", "0.5"),
    ],
)
def test_normalize(raw, norm):
    assert normalize(raw) == norm


@pytest.mark.parametrize(
    "a,b",
    [
        ("133", "33"),
        ("-3", "3"),
        ("3.3", "33"),
        ("1,23", "123"),
        ("(1,2)", "12"),
        ("33\\sqrt{2}", "33"),
        ("5.001", "5"),
    ],
)
def test_near_misses(a, b):
    assert not acc(f"Answer: {a}", b)


def test_evaluator_is_exact_and_bounded():
    assert evaluate("\\frac{3}{4} + \\frac14") == 1
    assert evaluate("2^{10}") == 1024
    assert evaluate("\\sqrt{\\sqrt{16}}") == 2
    assert evaluate("1.5 \\times 10^3") == 1500
    assert evaluate("2^{2^{2^{49}}}") == TOO_BIG
    assert evaluate("\\sqrt{2}") is None  # irrational: not for the exact path
    assert evaluate("x+1") is None and evaluate("(1,2)") is None and evaluate("1/0") is None
    assert evaluate("(" * 500 + "1" + ")" * 500) is None  # depth limit, no RecursionError
    assert evaluate("99999999999") == Fraction(99999999999)


def test_integer_ground_truths_compare_exactly():
    assert not acc("Answer: 99999999999", "100000000000")
    assert acc("Answer: 100000000000000000000", "100000000000000000000")
    assert not acc("Answer: 100000000000000000000", "100000000000000000001")


def test_symbolic_goes_to_math_verify():
    assert acc("\\boxed{x^2 - x^2}", "0")
    assert acc("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}", ds="aime_2024")
    assert not acc("\\boxed{\\sqrt{2}}", "\\sqrt{3}", ds="aime_2024")


def test_registry_and_arith():
    assert scorer_for("math_dapo") is SCORERS["math_dapo"]
    assert scorer_for("aime24") is SCORERS["aime"] and scorer_for("AIME-2025") is SCORERS["aime"]
    assert scorer_for(" Math_DAPO ") is SCORERS["math_dapo"]  # lower-cased, stripped
    assert get_scorer("arith") is score_arith
    assert scorer_for("something/else") is DEFAULT_SCORER and get_scorer("xaime") is DEFAULT_SCORER.score
    assert score_arith("7", "7")["acc"] and score_arith("Answer: 7", "7")["acc"]
    assert score_arith(" -3 \n", "-3")["acc"]
    assert not score_arith("7.0", "7")["acc"] and not score_arith("the answer is 7", "7")["acc"]
    assert score_arith("7\n8 9", "7")["acc"] and not score_arith("3 + 4 = 7", "7")["acc"]
    assert score_arith("Answer: 8", "7") == {"score": -1.0, "acc": False, "pred": "8"}


def test_result_shape():
    r = compute_score("math_dapo", "Answer: 12", "12", extra_info={"x": 1})
    assert r == {"score": 1.0, "acc": True, "pred": "12", "reward_errors": 0.0, "reward_timeouts": 0.0}
    r = compute_score(None, None, None)
    assert r == {"score": -1.0, "acc": False, "pred": "", "reward_errors": 0.0, "reward_timeouts": 0.0}
    assert compute_score("math_dapo", b"Answer: 3", 3)["acc"]

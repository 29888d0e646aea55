"""Properties of the exact path against independent oracles (Python's Fraction arithmetic, str.format)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from gspo_cli.rewards import compute_score, normalize
from gspo_cli.rewards.normalize import evaluate


def _leaf():
    return st.integers(0, 999).map(lambda n: (str(n), Fraction(n)))


def _combine(children):
    def build(op, a, b):
        (sa, va), (sb, vb) = a, b
        if op == "+":
            return f"{sa} + {sb}", va + vb
        if op == "-":
            return f"{sa} - ({sb})", va - vb
        if op == "*":
            return f"({sa}) \\times ({sb})", va * vb
        if op == "frac":
            return (f"\\frac{{{sa}}}{{{sb}}}", va / vb) if vb != 0 else (sa, va)
        if op == "sqrt":  # of a perfect square, so the value stays rational
            return f"\\sqrt{{({sa})^2}}", abs(va)
        return f"({sa})^{{2}}", va * va

    ops = st.sampled_from(["+", "-", "*", "frac", "sqrt", "sq"])
    return st.builds(build, ops, children, children)


EXPR = st.recursive(_leaf(), _combine, max_leaves=8)


@settings(max_examples=300, deadline=None, database=None)
@given(EXPR)
def test_evaluator_matches_fraction_arithmetic(e):
    latex, value = e
    assert evaluate(latex) == value


@settings(max_examples=300, deadline=None, database=None)
@given(st.integers(-(10**12), 10**12), st.sampled_from([",", "{,}", "\\,", "\\!", ",\\!", "\u2009", "\u202f"]))
def test_thousands_separators(n, sep):
    grouped = f"{abs(n):,}".replace(",", sep)
    text = ("-" if n < 0 else "") + grouped
    assert normalize(text) == str(n)
    assert compute_score("math_dapo", f"Work.\nAnswer: ${text}$", str(n))["acc"]
    assert not compute_score("math_dapo", f"Work.\nAnswer: ${text}$", str(n + 1))["acc"]


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(0, 999), st.integers(0, 3))
def test_aime_leading_zeros(n, zeros):
    s = "0" * zeros + str(n)
    assert compute_score("aime24", f"\\boxed{{{s}}}", str(n))["acc"]
    assert compute_score("math_dapo", f"Answer: {s}", f"{n:03d}")["acc"]

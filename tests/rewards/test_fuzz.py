"""Hostile input: compute_score never raises and always returns quickly.

The time bound is a hang detector (an interval timer fails the test if one call takes over HANG_S), not a
speed assertion: expected per-call times are milliseconds (see benchmarks/verifier.py and docs/benchmarks.md).
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gspo_cli.rewards import compute_score, extract, get_scorer, normalize

FUZZ_EXAMPLES = int(os.environ.get("GSPO_FUZZ_EXAMPLES", "300"))  # a longer hunt: GSPO_FUZZ_EXAMPLES=5000
HANG_S = 15.0  # > the 5 s math-verify fallback limit plus a one-time worker start
SOURCES = st.sampled_from(["math_dapo", "aime24", "arith", "", "other"])
PIECES = st.sampled_from(
    [
        "{",
        "}",
        "\\boxed{",
        "\\fbox{",
        "Answer:",
        "answer is",
        "$",
        "$$",
        "\\(",
        "\\)",
        "\\[",
        "\\]",
        "<think>",
        "</think>",
        "<|im_end|>",
        "|>",
        "\\frac",
        "\\sqrt",
        "^",
        "=",
        ",",
        "\\,",
        "{,}",
        "0",
        "7",
        "033",
        "-",
        ".",
        "\n",
        " ",
        "**",
        "\\text{",
        "Therefore",
        "[",
        "]",
        "9^{9^{9^{9}}}",
        "\\left(",
        "所以",
        "%",
    ]
)
TEXT = st.one_of(
    st.text(max_size=400),
    st.lists(PIECES, max_size=200).map("".join),
    st.tuples(st.text(max_size=50), PIECES, st.integers(1, 5000)).map(lambda t: t[0] + t[1] * t[2]),
)
GT = st.one_of(
    st.integers(-(10**6), 10**6).map(str), st.text(max_size=20), st.sampled_from(["", "\\frac{1}{2}", "x+1"])
)


@contextmanager
def hang_guard(seconds: float = HANG_S):
    def _boom(signum, frame):
        raise AssertionError(f"a compute_score call ran over {seconds}s")

    old = signal.signal(signal.SIGALRM, _boom)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _check(r):
    # a scorer's own dict, or compute_score's with the per-response failure counts (guard.py)
    assert set(r) in ({"score", "acc", "pred"}, {"score", "acc", "pred", "reward_errors", "reward_timeouts"})
    assert r.get("reward_errors", 0.0) == 0.0  # fuzzed text is a wrong answer, never a scoring exception
    assert r["score"] in (1.0, -1.0) and isinstance(r["acc"], bool) and isinstance(r["pred"], str)
    assert (r["score"] == 1.0) == r["acc"]


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(ds=SOURCES, text=TEXT, gt=GT)
def test_compute_score_never_raises(ds, text, gt):
    with hang_guard():
        # The scorer itself, not only compute_score (whose catch-all would hide a bug from this test).
        _check(get_scorer(ds)(text, gt))
        _check(compute_score(ds, text, gt))
        for style in ("dapo", "boxed"):
            a = extract(text, style).answer
            if a is not None:
                normalize(a)
        normalize(text[:3000])


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(prefix=st.text(max_size=30), n=st.integers(50_000, 200_000), tail=PIECES, gt=st.integers(0, 999))
def test_huge_inputs(prefix, n, tail, gt):
    text = prefix + ("x" * n) + tail + f" Answer: {gt}"
    with hang_guard():
        r = get_scorer("math_dapo")(text, str(gt))
    _check(r)


def test_named_hostile_inputs_stay_bounded():
    cases = [
        "{" * 5000 + "}" * 5000,
        "\\boxed{" + "{" * 5000 + "42" + "}" * 5000,
        "\\boxed{" * 5000 + "42",
        "$" * 200_001,
        "Answer:" * 30_000,
        "a" * 200_000 + "\\boxed{42}",
        "(" * 100_000 + "1",
        "\\frac" * 20_000,
        "answer is " * 20_000,
        "1," * 100_000,
        "Therefore " * 20_000 + ".",
        "[" * 50_000 + "]" * 50_000,
    ]
    for text in cases:
        with hang_guard():
            _check(get_scorer("math_dapo")(text, "42"))
            _check(get_scorer("other")(text, "x+1"))
            extract(text, "boxed")


def _reference_group_end(s: str, i: int) -> int:
    depth = 0
    for k in range(i, len(s)):
        depth += {"{": 1, "}": -1}.get(s[k], 0)
        if depth == 0:
            return k
    return -1


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet="{}ab", max_size=60))
def test_brace_matching_agrees_with_a_plain_counter(body):
    from gspo_cli.rewards.latex import find_group_end

    s = "{" + body
    assert find_group_end(s, 0) == _reference_group_end(s, 0)

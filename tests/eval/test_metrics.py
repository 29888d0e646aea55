"""pass@k against brute-force enumeration and the closed form's edge cases; maj@k tie rules; summaries."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gspo_cli.eval import metrics as M


def brute_pass_at_k(flags: list[bool], k: int) -> Fraction:
    subsets = list(itertools.combinations(range(len(flags)), k))
    hits = sum(1 for s in subsets if any(flags[i] for i in s))
    return Fraction(hits, len(subsets))


@pytest.mark.parametrize("n", range(1, 9))
def test_pass_at_k_equals_enumeration_of_all_k_subsets(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            # the correct samples may sit anywhere: try two placements
            for flags in ([True] * c + [False] * (n - c), [False] * (n - c) + [True] * c):
                assert M.pass_at_k_exact(n, c, k) == brute_pass_at_k(flags, k), (n, c, k)


@given(st.lists(st.booleans(), min_size=1, max_size=10), st.data())
@settings(max_examples=150, deadline=None)
def test_pass_at_k_enumeration_property(flags, data):
    k = data.draw(st.integers(1, len(flags)))
    assert M.pass_at_k_exact(len(flags), sum(flags), k) == brute_pass_at_k(flags, k)


def test_pass_at_k_edge_cases():
    for n in (1, 5, 16, 64, 1024):
        for k in {1, min(2, n), n // 2 or 1, n}:
            assert M.pass_at_k(n, 0, k) == 0.0  # c = 0: never
            assert M.pass_at_k(n, n, k) == 1.0  # c = n: always
    # n - c < k: every subset holds a correct sample, even when C(n-c, k) would be "0 / C(n,k)" territory
    assert M.pass_at_k_exact(10, 8, 3) == 1
    assert M.pass_at_k_exact(32, 30, 4) == 1
    # n - c == k: exactly one all-wrong subset
    assert M.pass_at_k_exact(10, 7, 3) == 1 - Fraction(1, math.comb(10, 3))
    # k = 1 is plain accuracy; k = n is "any correct"
    assert M.pass_at_k_exact(32, 5, 1) == Fraction(5, 32)
    assert M.pass_at_k_exact(32, 1, 32) == 1
    # large n stays exact (no float overflow of the binomials)
    assert 0 < M.pass_at_k(1024, 3, 512) < 1
    with pytest.raises(ValueError):
        M.pass_at_k(4, 5, 1)
    with pytest.raises(ValueError):
        M.pass_at_k(4, 1, 5)
    with pytest.raises(ValueError):
        M.pass_at_k(4, 1, 0)


def test_majority_vote_plain_majority():
    assert M.majority_vote(["3", "5", "5", "3", "5"]) == 1  # "5" wins 3-2, first seen at index 1


def test_majority_vote_tie_goes_to_first_seen():
    assert M.majority_vote(["7", "3", "3", "7"]) == 0  # 2-2: "7" appeared first
    assert M.majority_vote(["3", "7", "7", "3"]) == 0  # same counts, order swapped -> "3"
    assert M.majority_vote([None, "9", "4", "4", "9"]) == 1  # abstainers do not count toward "first"


def test_majority_vote_abstain_and_whitespace():
    assert M.majority_vote([None, None, "2"]) == 2  # one vote beats any number of abstentions
    assert M.majority_vote([None, "", "  "]) is None  # nobody answered
    assert M.majority_vote([" 4", "4 ", "5"]) == 0  # answers compared stripped


def test_maj_at_k_blocks_and_correctness():
    answers = ["1", "2", "2", "1", "1", "1", "3", None]
    correct = [True, False, False, True, True, True, False, False]
    # k=1: each sample alone -> accuracy over answering samples
    assert M.maj_at_k(answers, correct, 1) == pytest.approx(4 / 8)
    # k=2 blocks: [1,2] tie -> "1" correct; [2,1] tie -> "2" wrong; [1,1] right; [3,None] -> "3" wrong
    assert M.maj_at_k(answers, correct, 2) == pytest.approx(2 / 4)
    # k=3: blocks [1,2,2] -> "2" wrong; [1,1,1] -> right; remainder (2 samples) is dropped
    assert M.maj_at_k(answers, correct, 3) == pytest.approx(1 / 2)
    # k=8: "1" has 4 votes
    assert M.maj_at_k(answers, correct, 8) == 1.0
    # a block with no answers is wrong
    assert M.maj_at_k([None, None], [False, False], 2) == 0.0


def test_maj_uses_verdict_of_first_sample_with_winning_answer():
    # same string, verdicts disagree (should not happen with one verifier, but the rule must be fixed)
    assert M.maj_at_k(["5", "5"], [False, True], 2) == 0.0
    assert M.maj_at_k(["5", "5"], [True, False], 2) == 1.0


def test_percentile_matches_numpy():
    import numpy as np

    vals = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
    for q in (0, 10, 50, 90, 100):
        assert M.percentile(vals, q) == pytest.approx(float(np.percentile(vals, q)))


def test_stderr():
    assert M.stderr([1.0]) == 0.0
    vals = [0.0, 1.0, 1.0, 0.5]
    import statistics

    assert M.stderr(vals) == pytest.approx(statistics.stdev(vals) / 2)


def test_summarize_flat_metrics():
    S = M.ScoredSample
    problems = [
        [S(True, "1", 4, False), S(False, "2", 8, True), S(True, "1", 2, False), S(False, None, 8, True)],
        [S(False, "0", 1, False), S(False, "0", 1, False), S(False, None, 8, True), S(False, "9", 3, False)],
    ]
    out = M.summarize(problems, [1, 2, 4])
    m = out["metrics"]
    assert m["avg@4"] == pytest.approx(0.25)
    assert m["pass@1"] == pytest.approx(0.25)
    assert m["pass@4"] == pytest.approx(0.5)
    assert m["pass@2"] == pytest.approx((1 - 1 / 6 + 0) / 2)
    assert m["maj@4"] == pytest.approx(0.5)  # problem 0 votes "1" (2 of 3) -> right
    assert m["extraction_rate"] == pytest.approx(6 / 8)
    assert m["truncation_rate"] == pytest.approx(3 / 8)
    assert m["response_length_mean"] == pytest.approx(35 / 8)
    assert out["per_problem"][0]["majority_answer"] == "1"
    assert out["per_problem"][1]["correct"] == 0
    with pytest.raises(ValueError):
        M.summarize(problems, [5])
    with pytest.raises(ValueError):
        M.summarize([problems[0], problems[1][:2]], [1])

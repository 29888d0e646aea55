"""score_batch: a real pool of worker processes; order, per-item time limit, failure isolation."""

from __future__ import annotations

from pathlib import Path

import pytest

from gspo_cli.rewards import compute_score, score_batch

HELPERS = "gspo_reward_test_helpers:misbehave"


@pytest.fixture
def helpers_on_path(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))


def _items(n):
    return [("math_dapo", f"Work.\nAnswer: {i if i % 3 else i + 1}", str(i)) for i in range(n)]


def test_order_and_results_match_serial():
    items = _items(150)
    got = score_batch(items, workers=2, chunk_size=16)
    want = [compute_score(*it) for it in items]
    assert [g["acc"] for g in got] == [w["acc"] for w in want]
    assert [g["pred"] for g in got] == [w["pred"] for w in want]
    assert all(g["error"] is None for g in got)
    assert sum(g["acc"] for g in got) == 100


def test_mappings_and_serial_mode():
    items = [
        {"data_source": "aime24", "solution_str": "\\boxed{073}", "ground_truth": "73"},
        {"data_source": "arith", "solution_str": "7", "ground_truth": "8"},
    ]
    assert [r["acc"] for r in score_batch(items, workers=0)] == [True, False]
    assert [r["acc"] for r in score_batch(items, workers=1)] == [True, False]
    assert score_batch([], workers=2) == []


def test_failures_are_isolated_with_reasons(helpers_on_path):
    good = [("math_dapo", "Answer: 5", "5")] * 6
    items = (
        good[:2]
        + [("x", "raise", "1")]
        + good[2:4]
        + [("x", "hang-python", "1")]
        + good[4:]
        + [("x", "exit", "1"), ("x", "hang-c", "1"), ("math_dapo", "Answer: 6", "6")]
    )
    res = score_batch(items, workers=2, chunk_size=3, timeout_s=1.0, scorer=HELPERS)
    assert len(res) == len(items)
    errors = {i: r["error"] for i, r in enumerate(res) if r["error"]}
    assert set(errors) == {2, 5, 8, 9}
    assert "ValueError: boom" in errors[2]
    assert "timeout" in errors[5] and "killed" not in errors[5]  # the worker's own timer
    assert "worker died" in errors[8]
    assert "timeout" in errors[9] and "killed" in errors[9]  # the parent's hard kill
    for i, r in enumerate(res):
        if i in errors:
            assert r["score"] == -1.0 and r["acc"] is False
        else:
            assert r["acc"] is True and r["score"] == 1.0

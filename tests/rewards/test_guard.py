"""No silent reward errors (issue #22): an exception or an overrun while scoring one response is counted and
reported, never a plain 0; the time limit holds off the main thread; degenerate inputs finish within it."""

from __future__ import annotations

import json
import threading
import time

import pytest

from gspo_cli.config.health import HealthSection
from gspo_cli.metrics.health import Monitor
from gspo_cli.rewards import guard, score
from gspo_cli.rewards.guard import TALLY


@pytest.fixture
def fresh_fault(monkeypatch):
    """GSPO_REWARD_FAULT is read once per process: forget the parsed spec around each test."""
    monkeypatch.setattr(guard, "_fault", None)
    yield monkeypatch
    guard._fault = None


def test_a_scoring_exception_is_counted_reported_and_scored_wrong(monkeypatch, capsys):
    def boom(s, g):
        raise ValueError("verifier bug")

    monkeypatch.setitem(score.SCORERS, "broken", score.ScorerEntry(boom, None))  # judges alone, as arith
    monkeypatch.setattr(TALLY, "_reported", set())
    mark = TALLY.snapshot()
    r = score.compute_score("broken", "Answer: 3", "3")
    assert r["score"] == -1.0 and r["reward_errors"] == 1.0 and r["reward_timeouts"] == 0.0
    assert score.compute_score("math_dapo", "Answer: 3", "3")["reward_errors"] == 0.0
    assert score.compute_score("broken", "Answer: 3", "3")["reward_errors"] == 1.0
    assert TALLY.since(mark) == {"reward/scored": 3.0, "reward/errors": 2.0, "reward/timeouts": 0.0}
    err = capsys.readouterr().err
    assert err.count("gspo reward error: ValueError: verifier bug") == 1  # the first is printed, all are counted
    assert score.explain("broken", "x", "3").how == "error"


def test_an_overrun_is_a_timeout_off_the_main_thread(fresh_fault):
    fresh_fault.setenv("GSPO_REWARD_FAULT", "timeout:1")
    fresh_fault.setenv("GSPO_REWARD_TIMEOUT_S", "0.05")
    out = {}

    def worker():  # a Ray reward worker calls from a thread that is not the main one: no signal.alarm there
        mark = TALLY.snapshot()
        out["r"] = score.compute_score("math_dapo", "Answer: 3", "3")
        out["tally"] = TALLY.since(mark)

    t = threading.Thread(target=worker)
    t.start()
    t.join(10)
    assert out["r"]["acc"] is False and out["r"]["reward_timeouts"] == 1.0
    assert out["tally"]["reward/timeouts"] == 1.0 and out["tally"]["reward/errors"] == 0.0


def test_injected_errors_hit_every_kth_response(fresh_fault):
    fresh_fault.setenv("GSPO_REWARD_FAULT", "error:3")
    got = [score.compute_score("math_dapo", "Answer: 3", "3")["reward_errors"] for _ in range(6)]
    assert got == [0.0, 0.0, 1.0, 0.0, 0.0, 1.0]


def test_a_bad_fault_spec_is_an_error_not_a_silent_noop(fresh_fault):
    fresh_fault.setenv("GSPO_REWARD_FAULT", "boom")
    r = score.compute_score("math_dapo", "Answer: 3", "3")
    assert r["reward_errors"] == 1.0  # counted (and printed): the run shows it, never a quiet no-op


DEGENERATE = {
    "100k-char repetition": "the sum is 12 and " * 5600 + "\\boxed{34}",
    "100k repeated answer lines": "Answer: 34\n" * 10_000,
    "deeply nested braces": "\\boxed{" + "{" * 50_000 + "34" + "}" * 50_001,
    "nested boxes": "\\boxed{" * 20_000 + "34" + "}" * 20_000,
    "megabyte-long number": "Answer: " + "9" * 1_000_000,
    "megabyte-long number in a box": "\\boxed{" + "7" * 1_000_000 + "}",
    "megabyte of digits and commas": "Answer: " + "1," * 500_000 + "1",
    "power tower": "Answer: 9^{9^{9^{9^{9}}}}",
}


@pytest.mark.parametrize("name", list(DEGENERATE))
def test_degenerate_inputs_finish_within_the_limit_and_are_not_errors(name):
    for ds in ("math_dapo", "other"):
        start = time.monotonic()
        r = score.compute_score(ds, DEGENERATE[name], "34")
        # the limit (10 s) is what holds: a call over it is a counted time-out, never a hang or an error
        assert r["reward_errors"] == 0.0 and r["reward_timeouts"] == 0.0, (name, time.monotonic() - start)
        print(f"{name} ({ds}): {1000 * (time.monotonic() - start):.1f} ms, acc={r['acc']}")


def _monitor(**sets) -> Monitor:
    cfg = HealthSection(warmup_steps=10)
    for path, value in sets.items():
        section, field = path.split("__")
        setattr(getattr(cfg, section), field, value)
    return Monitor(cfg)


def test_health_warns_at_the_first_error_even_in_warmup_and_stops_above_the_rate():
    m = _monitor()
    clean = {"reward/errors": 0.0, "reward/timeouts": 0.0, "reward/scored": 64.0}
    assert m.observe(1, clean, now=1.0) == []
    events = m.observe(2, {**clean, "reward/errors": 1.0}, now=2.0)
    assert [(e.rule, e.action) for e in events] == [("reward_errors", "warn")]
    assert "failed on 1 response(s)" in events[0].message
    events = m.observe(3, {**clean, "reward/errors": 3.0, "reward/timeouts": 2.0}, now=3.0)  # 5/64 > 5%
    assert [(e.rule, e.action) for e in events] == [("reward_error_rate", "stop")]
    assert events[0].value == pytest.approx(5 / 64) and events[0].threshold == 0.05


def test_the_rate_is_preset_configurable():
    m = _monitor(reward_error_rate__max_rate=0.5, reward_errors__action="off")
    assert m.observe(1, {"reward/errors": 10.0, "reward/timeouts": 0.0, "reward/scored": 64.0}, now=1.0) == []
    ev = m.observe(2, {"reward/errors": 40.0, "reward/timeouts": 0.0, "reward/scored": 64.0}, now=2.0)
    assert [e.rule for e in ev] == ["reward_error_rate"]


def test_gspo_score_reports_scoring_errors(gspo, tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text("".join(json.dumps({"response": f"Answer: {i}", "ground_truth": str(i)}) + "\n" for i in range(4)))
    proc = gspo("score", str(f), "--preset", "qwen3-8b-2x8", "--json", env={"GSPO_REWARD_FAULT": "error:2"})
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert rep["reward_errors"] == 2 and rep["reward_timeouts"] == 0 and rep["correct"] == 2
    assert rep["how"]["error"] == 2
    assert "gspo reward error: RuntimeError: GSPO_REWARD_FAULT" in proc.stderr

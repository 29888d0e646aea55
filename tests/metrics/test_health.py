"""Health rules on synthetic metric series (verl names), one test per rule, and no alarm on the tiny demo's run."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from gspo_cli.config.health import HealthSection
from gspo_cli.metrics import health
from gspo_cli.metrics.health import Context, Monitor

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "health" / "tiny-demo-metrics.jsonl.gz"


def _series(key, values, **extra):
    return [(i + 1, {key: v, **extra}) for i, v in enumerate(values)]


def _run(cfg, steps, ctx=None):
    monitor = Monitor(cfg, ctx or Context())
    return [e for step, data in steps for e in monitor.observe(step, data, now=float(step))]


def _cfg(**sets):
    cfg = HealthSection(warmup_steps=0)
    for path, value in sets.items():
        section, field = path.split("__")
        setattr(getattr(cfg, section), field, value)
    return cfg


def test_nonfinite_loss_or_grad_norm_fires_at_once_with_stop():
    events = _run(_cfg(), _series("actor/pg_loss", [0.1, 0.2, None, 0.1]))
    assert [(e.step, e.rule, e.action) for e in events] == [(3, "nonfinite", "stop")]
    assert _run(_cfg(), _series("actor/grad_norm", [0.3, math.inf]))[0].rule == "nonfinite"
    assert _run(_cfg(), _series("actor/grad_norm", [0.3, 0.4, 0.5])) == []


def test_grad_norm_spike_against_its_running_median():
    quiet = [0.3, 0.35, 0.28, 0.31, 0.33] * 4
    events = _run(_cfg(), _series("actor/grad_norm", [*quiet, 3.5, 0.3]))
    assert [(e.step, e.rule) for e in events] == [(21, "grad_norm_spike")]
    assert events[0].threshold == pytest.approx(10 * 0.31)
    assert _run(_cfg(), _series("actor/grad_norm", [*quiet, 2.9])) == []  # below 10 x median
    assert _run(_cfg(), _series("actor/grad_norm", [0.3] * 5 + [9.0])) == []  # too little history


def test_entropy_collapse_floor_and_relative_fall():
    assert [e.step for e in _run(_cfg(), _series("actor/entropy", [0.5, 0.3, 0.01]))] == [3]
    falling = [1.0] * 10 + [1.0 - 0.09 * i for i in range(1, 11)] + [0.05] * 5
    events = _run(_cfg(entropy_collapse__window=10, entropy_collapse__floor=0.0), _series("actor/entropy", falling))
    assert events and "fell" in events[0].message
    steady = [0.6, 0.55, 0.62, 0.58] * 30
    assert _run(_cfg(), _series("actor/entropy", steady)) == []


def test_clip_fraction_band_follows_the_loss_mode_and_on_policy_steps():
    gspo_off_policy = Context("gspo", off_policy=True)
    assert health.clip_band(HealthSection().clip_fraction, gspo_off_policy) == (0.02, 0.5)
    assert health.clip_band(HealthSection().clip_fraction, Context("gspo", off_policy=False)) == (0.0, 0.5)
    assert health.clip_band(HealthSection().clip_fraction, Context("vanilla", off_policy=True)) == (0.0, 0.05)
    # GSPO clipping like the paper (~0.15): healthy; clipping nothing off-policy: the ratio range is wrong.
    assert _run(_cfg(), _series("actor/pg_clipfrac", [0.15] * 10), gspo_off_policy) == []
    low = _run(_cfg(), _series("actor/pg_clipfrac", [0.001] * 10), gspo_off_policy)
    assert [(e.step, e.rule) for e in low] == [(5, "clip_fraction")]  # patience 5
    assert _run(_cfg(), _series("actor/pg_clipfrac", [0.0] * 10), Context("gspo")) == []  # on-policy: 0 is right
    high = _run(_cfg(), _series("actor/pg_clipfrac", [0.15] * 10), Context("vanilla", off_policy=True))
    assert high and high[0].threshold == 0.05


def test_routing_volatility_band_from_the_gspo_paper():
    """moe/routing_flip_frac at the paper's ~0.10 (Qwen3-30B-A3B) is healthy; three steps above 0.3 warn."""
    assert HealthSection().routing_volatility.max_flip == 0.3
    assert _run(_cfg(), _series("moe/routing_flip_frac", [0.1, 0.12, 0.29] * 4)) == []
    events = _run(_cfg(), _series("moe/routing_flip_frac", [0.1, 0.4, 0.45, 0.5, 0.1]))
    assert [(e.step, e.rule, e.action) for e in events] == [(4, "routing_volatility", "warn")]  # patience 3
    assert events[0].threshold == 0.3 and "run-moe-routing-volatile" in events[0].message
    token_level = _run(_cfg(), _series("moe/routing_flip_frac", [0.6] * 3), Context("vanilla"))
    assert "routing replay" in token_level[0].message
    assert _run(_cfg(), _series("actor/pg_loss", [0.1] * 5)) == []  # a dense run has no such metric


def test_truncation_most_responses_at_the_limit():
    events = _run(_cfg(), _series("response_length/clip_ratio", [0.1, 0.7, 0.8, 0.9, 0.8, 0.9, 0.95]))
    assert [(e.step, e.rule) for e in events] == [(6, "truncation")]


def test_reward_flat_for_a_window():
    flat = _series("critic/score/mean", [0.0] * 60)
    assert [(e.step, e.rule) for e in _run(_cfg(), flat)] == [(50, "reward_flat")]
    moving = _series("critic/score/mean", [0.01 * (i % 7) for i in range(60)])
    assert _run(_cfg(), moving) == []


def test_validation_accuracy_drop_from_its_best():
    steps = [(s, {"val-core/math/acc/mean@4": acc}) for s, acc in ((0, 0.2), (10, 0.5), (20, 0.45), (30, 0.35))]
    events = _run(_cfg(), steps)
    assert [(e.step, e.rule) for e in events] == [(30, "val_drop")]
    assert events[0].threshold == pytest.approx(0.4)


def test_throughput_fall_against_its_running_median_needs_a_sustained_fall():
    base = [1000.0, 1100.0, 950.0, 1050.0] * 5
    one_slow = _series("perf/throughput", [*base, 300.0, 1000.0, 1020.0, 990.0])
    assert _run(_cfg(), one_slow) == []
    slow = _series("perf/throughput", [*base, *[300.0] * 8])
    assert [e.rule for e in _run(_cfg(), slow)] == ["throughput"]


def test_rules_wait_for_warmup_fire_once_and_rearm_after_clearing():
    cfg = HealthSection()  # warmup 10, rearm 10
    truncated = _series("response_length/clip_ratio", [0.9] * 8 + [0.0] * 30 + [0.9] * 10)
    assert [e.step for e in _run(cfg, truncated)] == [43]
    flapping = _series("actor/entropy", [0.01, 0.03] * 20)
    assert len(_run(_cfg(), flapping)) == 1


def test_a_rule_set_off_never_fires():
    assert _run(_cfg(nonfinite__action="off"), _series("actor/pg_loss", [None])) == []


def test_stall_limit_and_detection():
    cfg = HealthSection(stall={"factor": 5, "floor_s": 3, "startup_s": 60})
    monitor = Monitor(cfg)
    monitor.new_attempt(None, now=0.0)
    assert monitor.check_stall(now=59.0) is None
    assert monitor.check_stall(now=61.0).message.startswith("no first step")
    monitor.new_attempt(None, now=100.0)
    for i, t in enumerate((100.0, 101.0, 102.0, 103.0)):
        monitor.observe(i + 1, {}, now=t)
    assert health.stall_limit(monitor.intervals, cfg.stall, started=True) == 5.0  # 5 x 1 s
    assert monitor.check_stall(now=107.9) is None
    event = monitor.check_stall(now=108.5)
    assert event.rule == "stall" and event.action == "stop" and event.extra["late_by_s"] == pytest.approx(0.5)
    assert monitor.check_stall(now=200.0) is None  # once per stall
    monitor.observe(5, {}, now=201.0)
    assert monitor.check_stall(now=201.5) is None


def test_no_false_alarm_on_the_tiny_demo_run():
    """The metrics of a normal `make demo` run (tests/fixtures/health/README.md) raise nothing with the tiny
    preset's settings; the LLM defaults do flag this run's (rightly) collapsing entropy."""
    from gspo_cli.config.presets import load_preset

    preset = load_preset("tiny")
    records = [json.loads(line) for line in gzip.open(FIXTURE, "rt")]
    assert len(records) == 601
    steps = [(r["step"], r["data"]) for r in records]
    assert _run(preset.trainer.health, steps, Context.from_preset(preset)) == []
    defaults = _run(HealthSection(), steps, Context.from_preset(preset))
    assert "entropy_collapse" in {e.rule for e in defaults}


def test_no_false_alarm_on_the_tiny_moe_run_and_the_band_bites_when_routing_moves():
    """A real tiny-moe run (tests/fixtures/health/README.md) raises nothing; the same run with the routes flipping
    10x as often (0.1-0.4 of the experts per step) raises routing_volatility."""
    from gspo_cli.config.presets import load_preset

    preset = load_preset("tiny-moe")
    fixture = FIXTURE.parent / "tiny-moe-metrics.jsonl.gz"
    records = [json.loads(line) for line in gzip.open(fixture, "rt")]
    steps = [(r["step"], r["data"]) for r in records]
    flips = [d["moe/routing_flip_frac"] for _, d in steps if "moe/routing_flip_frac" in d]
    assert len(flips) >= 290 and max(flips) < 0.3
    assert _run(preset.trainer.health, steps, Context.from_preset(preset)) == []
    volatile = [(s, {**d, "moe/routing_flip_frac": 10 * d["moe/routing_flip_frac"]}) if "moe/routing_flip_frac" in d
                else (s, d) for s, d in steps]
    events = _run(preset.trainer.health, volatile, Context.from_preset(preset))
    assert {e.rule for e in events} == {"routing_volatility"}


def test_health_jsonl_round_trip(tmp_path):
    path = tmp_path / "health.jsonl"
    event = health.Event(3, "nonfinite", "stop", math.nan, "finite", "actor/pg_loss is NaN", time=1.0)
    health.append_event(path, event)
    (record,) = health.read_events(path)
    assert record == {"step": 3, "rule": "nonfinite", "action": "stop", "severity": "error", "value": None,
                      "threshold": "finite", "message": "actor/pg_loss is NaN", "time": 1.0}

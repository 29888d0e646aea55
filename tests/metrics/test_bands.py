"""Expected-value bands (gspo_cli/metrics/bands.py) through the health monitor: every band has its sources, the
rules' defaults are the bands' limits, the bands stay quiet on the tiny demo's real 600-step run and on published
healthy GSPO levels, and fire (once, after warm-up and patience, with what to check and the source) on a published
bad run, on a real bad tiny-verl run (weight sync off) and on synthetic bad runs (named synthetic), each with a
control that does not fire."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gspo_cli.config.health import HealthSection
from gspo_cli.config.presets import load_preset
from gspo_cli.metrics import bands
from gspo_cli.metrics.health import Context, Monitor, clip_band

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "health"
PUBLISHED = json.loads((FIXTURES / "published-gspo-levels.json").read_text())
BAND_RULES = ("clip_fraction", "rollout_gap", "entropy_collapse", "entropy_rising", "response_shrink")
GSPO = Context("gspo", off_policy=True, rollout="vllm", preset="qwen3-32b-4x16")


def replay(series: list[dict], cfg=None, ctx: Context = GSPO) -> list:
    monitor = Monitor(cfg or HealthSection(), ctx)
    events = []
    for step, data in enumerate(series, 1):
        events += monitor.observe(step, data, now=float(step))
    return events


def level_series(entry: dict) -> list[dict]:
    """A published level as a series: flat at `level` or linear `start` -> `end` over `steps`, +-`spread`/2
    (relative) alternating around it."""
    n, spread = entry["steps"], entry.get("spread", 0.0)
    out = []
    for i in range(n):
        base = entry["level"] if "level" in entry else entry["start"] + (entry["end"] - entry["start"]) * i / (n - 1)
        out.append({entry["metric"]: base * (1 + (spread / 2) * (1 if i % 2 else -1))})
    return out


def test_every_band_names_its_sources_and_what_to_check():
    assert set(bands.BANDS) == set(BAND_RULES)
    for band in bands.BANDS.values():
        assert band.sources and all(s.where and s.figure for s in band.sources), band.name
        assert band.check and band.why and band.cite().startswith("source: ")


def test_rule_defaults_are_the_bands_limits():
    h = HealthSection()
    for loss in ("gspo", "gspo_token"):  # the rule's default band for the GSPO losses is the sourced band
        assert clip_band(h.clip_fraction, Context(loss, off_policy=True)) == (bands.CLIP_FRACTION.low,
                                                                            bands.CLIP_FRACTION.high)
    assert h.rollout_gap.high == bands.ROLLOUT_GAP.high
    assert h.entropy_collapse.floor == bands.ENTROPY_FLOOR.low
    assert h.entropy_rising.high == bands.ENTROPY_CEILING.high


def test_the_rollout_gap_band_is_verls_metric_and_the_published_baselines_sit_well_inside():
    healthy = [e for e in PUBLISHED["healthy"] if e["metric"] == bands.ROLLOUT_GAP.metric]
    assert len(healthy) == 2 and all(e["level"] * 3 < bands.ROLLOUT_GAP.high for e in healthy)
    assert {e["source"] for e in healthy} <= {s.where for s in bands.ROLLOUT_GAP.sources}


# ------------------------------------------------------------------ quiet


def test_quiet_on_the_tiny_demos_600_steps():
    """The tiny demo's real run (native engine, 600 steps, tests/fixtures/health/README.md) with every metric the
    bands read, through every rule with the tiny preset's settings: no band fires."""
    with gzip.open(FIXTURES / "tiny-demo-bands.jsonl.gz", "rt") as fh:
        records = [json.loads(line) for line in fh]
    assert len([r for r in records if "actor/pg_clipfrac" in r["data"]]) == 600
    for key in ("actor/entropy", "response_length/mean", bands.ROLLOUT_GAP.metric):
        assert sum(key in r["data"] for r in records) >= 500, key
    preset = load_preset("tiny")
    ctx = Context.from_preset(preset)
    monitor = Monitor(preset.trainer.health, Context(ctx.loss_mode, ctx.off_policy, "hf", preset.name))
    fired = [e for r in records for e in monitor.observe(r["step"], r["data"], now=float(r["step"]))]
    assert [(e.rule, e.step) for e in fired if e.rule in BAND_RULES] == []


@pytest.mark.parametrize("entry", PUBLISHED["healthy"], ids=lambda e: e["name"])
def test_quiet_on_published_healthy_levels(entry):
    events = replay(level_series(entry))
    assert events == [], [(e.rule, e.step, e.message) for e in events]


# ------------------------------------------------------------------ firing


@pytest.mark.parametrize("entry", PUBLISHED["bad"], ids=lambda e: e["name"])
def test_fires_once_on_a_published_bad_run(entry):
    events = replay(level_series(entry))
    assert [e.rule for e in events] == [entry["rule"]], [(e.rule, e.step, e.message) for e in events]
    (event,) = events
    band = bands.BANDS[entry["rule"]]
    assert event.value is not None and event.value > band.high
    assert band.cite() in event.message and "check: " in event.message


def test_fires_on_the_real_tiny_verl_run_with_the_weight_sync_off():
    """A real bad run: tiny-verl on verl's trainer (CPU) with vLLM's weights frozen after the first sync
    (GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS), metrics as verl wrote them (tests/fixtures/health/README.md). Its train/rollout
    gap leaves the band from the second step; the synced run of the same preset (control) sits at ~2e-7."""
    frozen = [json.loads(line) for line in (FIXTURES / "tiny-verl-frozen-metrics.jsonl").read_text().splitlines()]
    synced = [json.loads(line) for line in (FIXTURES / "tiny-verl-synced-metrics.jsonl").read_text().splitlines()]
    cfg = HealthSection(warmup_steps=0)
    cfg.rollout_gap.patience = 1
    hits = [e for e in replay([r["data"] for r in frozen], cfg) if e.rule == "rollout_gap"]
    assert len(hits) == 1 and hits[0].value > bands.ROLLOUT_GAP.high
    assert "verl-ascend-recipe" in hits[0].message
    assert [e for e in replay([r["data"] for r in synced], cfg) if e.rule == "rollout_gap"] == []
    assert max(r["data"][bands.ROLLOUT_GAP.metric] for r in synced) < 1e-5


GAP = bands.ROLLOUT_GAP.metric


@pytest.mark.parametrize(("name", "bad", "good", "rule"), [
    # SYNTHETIC: the Ascend baseline's gap stepping up 5x (a precision regression), against the baseline itself
    ("synthetic gap regression", [{GAP: 0.0045}] * 20 + [{GAP: 0.0227}] * 30, [{GAP: 0.0045}] * 50, "rollout_gap"),
    # SYNTHETIC: GSPO clipping everything (far off-policy) / nothing (a token-level clip range), against verl#2775's 0.1
    ("synthetic clip too high", [{"actor/pg_clipfrac": 0.7}] * 40, [{"actor/pg_clipfrac": 0.1}] * 40, "clip_fraction"),
    ("synthetic clip never binds", [{"actor/pg_clipfrac": 0.004}] * 40, [{"actor/pg_clipfrac": 0.1}] * 40,
     "clip_fraction"),
    # SYNTHETIC: responses halving after warm-up, against responses growing 500 -> 1500
    ("synthetic responses shrink", [{"response_length/mean": 800 - 10 * i} for i in range(60)],
     [{"response_length/mean": 500 + 17 * i} for i in range(60)], "response_shrink"),
    # SYNTHETIC: entropy collapsing to 0.01, against entropy flat at 0.5
    ("synthetic entropy collapse", [{"actor/entropy": 0.01}] * 40, [{"actor/entropy": 0.5}] * 40, "entropy_collapse"),
])
def test_fires_once_on_synthetic_bad_runs_and_not_on_their_control(name, bad, good, rule):
    events = [e for e in replay(bad) if e.rule in BAND_RULES]  # (a gap regression is also `mismatch`'s growth)
    assert [e.rule for e in events] == [rule], (name, [(e.rule, e.step, e.message) for e in events])
    assert "check: " in events[0].message and "source: " in events[0].message
    assert replay(good) == []


def test_warm_up_and_patience_hold_a_band_back():
    """A violation inside warm-up (10 steps), or shorter than the rule's patience (3), raises nothing; the same
    violation sustained after warm-up fires once."""
    assert replay([{GAP: 0.05}] * 10 + [{GAP: 0.004}] * 30) == []
    assert replay([{GAP: 0.004}] * 15 + [{GAP: 0.05}] * 2 + [{GAP: 0.004}] * 30) == []
    events = replay([{GAP: 0.004}] * 15 + [{GAP: 0.05}] * 3)
    assert [(e.rule, e.step) for e in events if e.rule in BAND_RULES] == [("rollout_gap", 18)]


def test_the_early_baseline_starts_after_warm_up():
    """entropy_rising compares with the entropy after warm-up: a model that starts high (a random-init tiny model
    at 3.6) and settles lower is not a rise; a rise from the settled level is."""
    settling = [{"actor/entropy": 3.6 - 0.3 * i} for i in range(10)] + [{"actor/entropy": 0.6}] * 40
    assert replay(settling) == []
    rising = settling + [{"actor/entropy": 1.4}] * 10
    assert [e.rule for e in replay(rising)] == ["entropy_rising"]

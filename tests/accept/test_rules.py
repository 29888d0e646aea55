"""The acceptance comparison against upstream's real baseline numbers (verl-ascend-recipe baseline/check_npu.py,
commit 2a3edec0): a log equal to the baseline passes; each metric moved just inside its tolerance passes, just
beyond it fails (both sides, as the source's abs() says); the window is steps 5-14 exactly; memory is read at the
last step."""

from __future__ import annotations

from pathlib import Path

import pytest

from gspo_cli.accept import baselines, rules

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upstream_baselines"
BASE_8B = baselines.parse_upstream_text((FIXTURES / "baseline_gspo_qwen3_8b_fsdp2_npu.txt").read_text())


def log_equal_to(base: dict[str, float], steps=range(1, 16), noise: float = 0.0) -> dict[int, dict[str, float]]:
    """A 15-step log whose window means equal `base`: alternating +noise/-noise around each value (10 steps in
    the window: the deviations cancel), memory at the last step."""
    out = {}
    for s in steps:
        sign = 1 if s % 2 else -1
        out[s] = {m: v * (1 + sign * noise) for m, v in base.items()}
    return out


def test_the_upstream_numbers_are_the_ones_shipped():
    assert BASE_8B == {rules.MEMORY: 20.825053, rules.STEP_TIME: 83.027817, rules.THROUGHPUT: 247.4022,
                       rules.REWARD: 0.3998047, rules.PROBS_DIFF: 0.0045346}


def test_a_log_equal_to_the_baseline_passes():
    verdict = rules.compare(log_equal_to(BASE_8B, noise=0.01), BASE_8B)
    assert verdict.passed and [m.status for m in verdict.metrics] == ["pass"] * 5
    assert verdict.window_steps == list(range(5, 15)) and verdict.last_step == 15
    for m in verdict.metrics:
        if m.metric != rules.MEMORY:
            assert m.value == pytest.approx(m.baseline, rel=1e-12)


# metric, inside, beyond: run value = baseline (+/-) the offset; absolute for absolute rules, % for relative ones
CASES = [
    (rules.REWARD, 0.049, 0.051),
    (rules.PROBS_DIFF, 4.9, 5.1),
    (rules.THROUGHPUT, 4.9, 5.1),
    (rules.STEP_TIME, 4.9, 5.1),
    (rules.MEMORY, 0.99, 1.01),
]


def _moved(metric: str, offset: float) -> float:
    base = BASE_8B[metric]
    kind = next(r.kind for r in rules.UPSTREAM_RULES if r.metric == metric)
    return base + offset if kind == "absolute" else base * (1 + offset / 100)


@pytest.mark.parametrize("metric,inside,beyond", CASES)
@pytest.mark.parametrize("side", [1, -1])
def test_each_tolerance_bites_on_both_sides(metric, inside, beyond, side):
    for offset, expect in ((inside, "pass"), (beyond, "fail")):
        log = log_equal_to(BASE_8B)
        steps = [15] if metric == rules.MEMORY else range(5, 15)
        for s in steps:
            log[s][metric] = _moved(metric, side * offset)
        verdict = rules.compare(log, BASE_8B)
        got = {m.metric: m.status for m in verdict.metrics}
        assert got[metric] == expect, (metric, side, offset)
        assert all(v == "pass" for k, v in got.items() if k != metric)
        assert verdict.passed is (expect == "pass")


def test_the_window_is_steps_5_to_14_and_nothing_else():
    log = log_equal_to(BASE_8B)
    for s in (1, 2, 3, 4, 15):  # outside the window: wild values change nothing (memory is read at 15)
        log[s][rules.REWARD] = 100.0
    assert rules.compare(log, BASE_8B).passed
    log[5][rules.REWARD] = BASE_8B[rules.REWARD] + 10 * 0.051  # one step inside moves the mean of ten by 0.051
    verdict = rules.compare(log, BASE_8B)
    assert not verdict.passed and verdict.failures[0].metric == rules.REWARD
    assert verdict.failures[0].difference == pytest.approx(0.051)


def test_the_mean_is_over_the_window_steps_that_log_the_metric():
    log = log_equal_to(BASE_8B)
    for s in (6, 7, 8):
        del log[s][rules.PROBS_DIFF]  # as check_npu.py's avg(): steps without the key are left out
    assert rules.compare(log, BASE_8B).passed


def test_memory_is_read_at_the_last_step_not_averaged():
    log = log_equal_to(BASE_8B)
    for s in range(5, 15):
        log[s][rules.MEMORY] = 60.0
    assert rules.compare(log, BASE_8B).passed  # only the last step counts
    log[15][rules.MEMORY] = BASE_8B[rules.MEMORY] + 1.5
    assert [m.metric for m in rules.compare(log, BASE_8B).failures] == [rules.MEMORY]


def test_a_short_run_has_no_window_and_fails_as_missing():
    log = {s: dict(BASE_8B) for s in (1, 2, 3)}  # the 3-step job: check_npu.py raises "无5~14步数据"
    verdict = rules.compare(log, BASE_8B)
    assert not verdict.passed and verdict.window_steps == []
    assert {m.status for m in verdict.metrics if m.metric != rules.MEMORY} == {"missing"}


def test_the_legacy_memory_key_counts():
    log = log_equal_to({k: v for k, v in BASE_8B.items() if k != rules.MEMORY})
    log[15][rules.LEGACY_MEMORY] = BASE_8B[rules.MEMORY]
    assert rules.compare(log, BASE_8B).passed


def test_one_sided_and_advisory_rules():
    drop = (rules.Rule(rules.THROUGHPUT, "relative", 5.0, direction="drop"),)
    base = {rules.THROUGHPUT: 100.0}
    faster = {s: {rules.THROUGHPUT: 120.0} for s in range(5, 15)}
    slower = {s: {rules.THROUGHPUT: 90.0} for s in range(5, 15)}
    assert rules.compare(faster, base, drop).passed and not rules.compare(slower, base, drop).passed
    rise = (rules.Rule(rules.STEP_TIME, "relative", 5.0, direction="rise"),)
    assert rules.compare({s: {rules.STEP_TIME: 0.5} for s in range(5, 15)}, {rules.STEP_TIME: 1.0}, rise).passed
    noisy = rules.noisy_host(rules.UPSTREAM_RULES, "noisy")
    verdict = rules.compare(slower, base, noisy)
    assert verdict.passed and next(m for m in verdict.metrics if m.metric == rules.THROUGHPUT).status == "warn"
    assert [r.advisory for r in noisy] == [False, True, True, False, False]


def test_a_metric_the_baseline_lacks_is_skipped_not_failed():
    base = dict(BASE_8B, **{rules.MEMORY: None})
    log = log_equal_to({k: v for k, v in BASE_8B.items() if k != rules.MEMORY})
    verdict = rules.compare(log, base)
    assert verdict.passed and verdict.metrics[0].status == "skipped"


def test_repeats_widen_a_limit_only_where_their_spread_is_larger():
    repeats = {rules.REWARD: [-0.35, -0.25], rules.PROBS_DIFF: [1.0e-7, 1.02e-7], rules.THROUGHPUT: [100.0]}
    widened = {r.metric: r for r in rules.widen(rules.UPSTREAM_RULES, repeats)}
    assert widened[rules.REWARD].limit == pytest.approx(0.1) and widened[rules.REWARD].widened_from == 0.05
    assert widened[rules.PROBS_DIFF].limit == 5.0 and widened[rules.PROBS_DIFF].widened_from is None  # 1.98 % < 5 %
    assert widened[rules.THROUGHPUT] == rules.UPSTREAM_RULES[1]  # one value: no spread
    assert "widened from ±0.05" in widened[rules.REWARD].describe()
    assert rules.rule_from_dict(rules.rule_to_dict(widened[rules.REWARD])) == widened[rules.REWARD]
    base = {rules.REWARD: -0.30}
    log = {s: {rules.REWARD: -0.21} for s in range(5, 15)}  # 0.09 off: beyond upstream's 0.05, inside the spread
    assert not rules.compare(log, base, (rules.UPSTREAM_RULES[3],)).passed
    assert rules.compare(log, base, (widened[rules.REWARD],)).passed

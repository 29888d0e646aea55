"""The acceptance comparison as pure code (no I/O): a run's per-step metrics against a baseline's values.

What is compared, and how, follows verl-ascend-recipe's checker (`baseline/check_npu.py` at commit
2a3edec04b4d4aaee83b61f050d507c431f63156, the checker verl's NPU nightly CI fetches since verl PR #7541):

- the window: steps 5..14 (`range(5, 15)`), those of them the log has; a metric's value is its mean over the
  window's steps that log it (a run of 15 steps, as the nightly scripts run: TOTAL_TRAINING_STEPS=15);
- memory (`actor/perf/max_memory_allocated_gb`) is not averaged: the value at the log's last step;
- tolerances, each failing when the difference is strictly larger (`abs(x) > limit`):
  memory: |run - baseline| > 1 (GB, absolute); perf/throughput and timing_s/step: |change| > 5 %;
  critic/rewards/mean: |run - baseline| > 0.05 (absolute); training/rollout_probs_diff_mean: |change| > 5 %.
  Every one of them is two-sided in the source (a throughput 6 % above the baseline fails too), where the
  issue text read "drops" / "rises" / "exceeds": the source wins. `direction` lets a user's own baseline make a
  rule one-sided ("drop": only a fall fails, "rise": only a rise fails).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

WINDOW = (5, 14)  # inclusive: check_npu.py's range(5, 15)
MEMORY = "actor/perf/max_memory_allocated_gb"
LEGACY_MEMORY = "perf/max_memory_allocated_gb"  # check_npu.py maps an old baseline's key to MEMORY
THROUGHPUT = "perf/throughput"
STEP_TIME = "timing_s/step"
REWARD = "critic/rewards/mean"
PROBS_DIFF = "training/rollout_probs_diff_mean"

Kind = Literal["absolute", "relative"]
Direction = Literal["both", "drop", "rise"]
Reduce = Literal["window-mean", "last-step"]
Status = Literal["pass", "fail", "warn", "missing", "skipped"]


@dataclass(frozen=True)
class Rule:
    """How one metric is judged: `kind` absolute (limit in the metric's unit) or relative (limit in % of the
    baseline); `direction` which side fails; `advisory` True: a failure is shown as warn and does not fail the
    verdict (time metrics of a baseline recorded on a shared, noisy host)."""

    metric: str
    kind: Kind
    limit: float
    reduce: Reduce = "window-mean"
    direction: Direction = "both"
    advisory: bool = False
    why_advisory: str = ""
    widened_from: float | None = None  # the limit before `widen` (a recorded baseline's spread over repeats)

    def describe(self) -> str:
        side = {"both": "±", "drop": "-", "rise": "+"}[self.direction]
        unit = " %" if self.kind == "relative" else (" GB" if self.metric == MEMORY else "")
        where = "last step" if self.reduce == "last-step" else f"mean of steps {WINDOW[0]}-{WINDOW[1]}"
        widened = f"; widened from {side}{self.widened_from:g}{unit}" if self.widened_from is not None else ""
        return f"{side}{self.limit:g}{unit} ({self.kind}, {where}{widened})"


# check_npu.py, function check(): the order it prints them in.
UPSTREAM_RULES: tuple[Rule, ...] = (
    Rule(MEMORY, "absolute", 1.0, reduce="last-step"),
    Rule(THROUGHPUT, "relative", 5.0),
    Rule(STEP_TIME, "relative", 5.0),
    Rule(REWARD, "absolute", 0.05),
    Rule(PROBS_DIFF, "relative", 5.0),
)
METRICS = tuple(r.metric for r in UPSTREAM_RULES)
TIME_METRICS = (THROUGHPUT, STEP_TIME)


def noisy_host(rules: tuple[Rule, ...], why: str) -> tuple[Rule, ...]:
    """The rules with the time metrics advisory: judged by the same limit, shown, not counted in the verdict."""
    return tuple(replace(r, advisory=True, why_advisory=why) if r.metric in TIME_METRICS else r for r in rules)


def spread(rule: Rule, values: list[float]) -> float:
    """How far apart repeated runs' values of `rule`'s metric are, in the rule's unit: max - min, or (relative)
    that range in % of their mean."""
    if len(values) < 2:
        return 0.0
    width = max(values) - min(values)
    if rule.kind == "absolute":
        return width
    mean = sum(values) / len(values)
    return width / abs(mean) * 100.0 if mean else 0.0


def widen(rules: tuple[Rule, ...], repeats: dict[str, list[float]]) -> tuple[Rule, ...]:
    """The rules with each limit raised to the spread its metric showed over repeated runs of the same job, where
    that spread is larger (an engine or host that does not repeat a run exactly: a tolerance tighter than the
    job's own repeat would fail the job against itself). The old limit is kept in `widened_from`."""
    out = []
    for rule in rules:
        width = spread(rule, repeats.get(rule.metric, []))
        out.append(replace(rule, limit=float(f"{width:.6g}"), widened_from=rule.limit) if width > rule.limit else rule)
    return tuple(out)


def rule_from_dict(d: dict[str, Any]) -> Rule:
    widened = d.get("widened_from")
    return Rule(metric=d["metric"], kind=d["kind"], limit=float(d["limit"]), reduce=d.get("reduce", "window-mean"),
                direction=d.get("direction", "both"), advisory=bool(d.get("advisory", False)),
                why_advisory=d.get("why_advisory", ""), widened_from=None if widened is None else float(widened))


def rule_to_dict(rule: Rule) -> dict[str, Any]:
    return asdict(rule)


# ------------------------------------------------------------------ the run's side


@dataclass
class RunValues:
    """What the comparison reads of a run: each metric reduced as its rule says, and the steps used."""

    values: dict[str, float | None]
    window_steps: list[int]
    last_step: int | None
    per_step: dict[str, dict[int, float]] = field(default_factory=dict)


def window_steps(steps: list[int]) -> list[int]:
    return [s for s in sorted(steps) if WINDOW[0] <= s <= WINDOW[1]]


def reduce_run(by_step: dict[int, dict[str, Any]], rules: tuple[Rule, ...] = UPSTREAM_RULES) -> RunValues:
    """Each rule's metric from `by_step` ({step: {metric: value}}, the last record of each step): the mean over
    the window's steps that log it, or (memory) the value at the last step. None where the run has no value."""
    steps = window_steps(list(by_step))
    last = max(by_step) if by_step else None
    values: dict[str, float | None] = {}
    per_step: dict[str, dict[int, float]] = {}
    for rule in rules:
        if rule.reduce == "last-step":
            data = by_step.get(last, {}) if last is not None else {}
            v = _number(data.get(rule.metric, data.get(LEGACY_MEMORY) if rule.metric == MEMORY else None))
            values[rule.metric] = v
            per_step[rule.metric] = {last: v} if (v is not None and last is not None) else {}
            continue
        got = {s: x for s in steps if (x := _number(by_step[s].get(rule.metric))) is not None}
        per_step[rule.metric] = got
        values[rule.metric] = sum(got.values()) / len(got) if got else None
    return RunValues(values, steps, last, per_step)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


# ------------------------------------------------------------------ verdicts


@dataclass
class MetricVerdict:
    metric: str
    status: Status
    value: float | None
    baseline: float | None
    difference: float | None  # absolute difference, or % change for a relative rule
    tolerance: str
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Verdict:
    passed: bool
    metrics: list[MetricVerdict]
    window_steps: list[int]
    last_step: int | None

    @property
    def failures(self) -> list[MetricVerdict]:
        return [m for m in self.metrics if m.status in ("fail", "missing")]


def judge(rule: Rule, value: float | None, baseline: float | None) -> MetricVerdict:
    """One metric: pass / fail (beyond the limit on a failing side) / warn (an advisory rule's fail) / missing
    (the baseline has it, the run does not) / skipped (the baseline has no value: nothing to compare with)."""
    tol = rule.describe()
    if baseline is None:
        return MetricVerdict(rule.metric, "skipped", value, None, None, tol, "the baseline has no value")
    if value is None:
        return MetricVerdict(rule.metric, "missing", None, baseline, None, tol,
                             "the run logged no value" + (" at its last step" if rule.reduce == "last-step"
                                                          else f" in steps {WINDOW[0]}-{WINDOW[1]}"))
    if rule.kind == "relative":
        if baseline == 0:
            ok = value == 0
            return MetricVerdict(rule.metric, "pass" if ok else "fail", value, baseline, None, tol,
                                 "" if ok else "the baseline is 0: no relative change can be formed")
        diff = (value - baseline) / baseline * 100.0
    else:
        diff = value - baseline
    beyond = {"both": abs(diff) > rule.limit, "drop": -diff > rule.limit, "rise": diff > rule.limit}[rule.direction]
    if beyond and rule.advisory:
        return MetricVerdict(rule.metric, "warn", value, baseline, diff, tol, rule.why_advisory)
    return MetricVerdict(rule.metric, "fail" if beyond else "pass", value, baseline, diff, tol,
                         rule.why_advisory if rule.advisory else "")


def compare(by_step: dict[int, dict[str, Any]], baseline: dict[str, float | None],
            rules: tuple[Rule, ...] = UPSTREAM_RULES) -> Verdict:
    """The verdict of a run ({step: metrics}) against baseline values ({metric: value}) under `rules`: passed
    when no metric fails or is missing (warn and skipped do not fail it). A run with no step in the window
    fails every window metric as missing."""
    run = reduce_run(by_step, rules)
    metrics = [judge(rule, run.values.get(rule.metric), baseline.get(rule.metric)) for rule in rules]
    passed = not any(m.status in ("fail", "missing") for m in metrics)
    return Verdict(passed, metrics, run.window_steps, run.last_step)

"""Run-health rules over the metric stream (verl's metric names), and the `health.jsonl` event file.

The rules are metrics/health_rules.py's (each a pure function `(history, config, context) -> Violation | None`
over the newest step; re-exported here, where signatures.py's detectors and the job wrapper find them).
`Monitor` keeps the history, applies `warmup_steps`, `patience` (consecutive violating steps) and edge-triggering
(a rule fires when it starts being violated, again only after it has been clear for `rearm_steps`), and turns
violations into `Event`s. The stall check is time-based and lives in `Monitor.check_stall`. No I/O here except
`append_event` / `read_events` at the bottom; the job wrapper (gspo_cli/jobs/supervise.py) feeds the monitor and
acts on the events.

health.jsonl: one JSON object per line,
  {"step": N, "rule": "...", "severity": "warn"|"error"|"info", "action": "warn"|"stop"|"restart"|"fail",
   "value": float|null, "threshold": float|str|null, "message": "...", "time": unix seconds}
plus, for restarts, "attempt", "cause" and "excerpt" (docs/health.md).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

# Re-exported: the job wrapper, the tests and signatures.py's detectors (`gspo_cli.metrics.health:mismatch`, shown
# by `gspo env doctor --explain`) name them here.
from gspo_cli.metrics.health_rules import (
    NO_WARMUP,
    RULES,
    Context,
    History,
    Rule,
    Violation,
    clip_band,
    gen_share,
    mismatch,
    routing_volatility,
    validation_accuracy,
)

__all__ = ["HEALTH_FILE", "RULES", "Context", "Event", "History", "Monitor", "Violation", "append_event", "clip_band",
           "gen_share", "mismatch", "read_events", "routing_volatility", "stall_limit", "validation_accuracy"]

HEALTH_FILE = "health.jsonl"  # runs/<run>/health.jsonl


@dataclass
class Event:
    step: int
    rule: str
    action: str
    value: float | None
    threshold: float | str | None
    message: str
    time: float = field(default_factory=time.time)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> str:
        return {"stop": "error", "fail": "error", "restart": "warn", "warn": "warn"}.get(self.action, "info")

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        extra = record.pop("extra")
        value = record["value"]
        if isinstance(value, float) and not math.isfinite(value):
            record["value"] = None  # NaN/inf are not JSON
        return {**record, "severity": self.severity, **extra}


# ---------------------------------------------------------------- stall


def stall_limit(intervals: list[float], cfg, started: bool) -> float:
    """Seconds without a new step after which the run counts as stalled."""
    if not started or not intervals:
        return cfg.startup_s
    return max(cfg.factor * statistics.median(intervals), cfg.floor_s)


# ---------------------------------------------------------------- the monitor


class Monitor:
    """Feeds steps to the rules; remembers history, patience counts, which rules are active, step arrival times."""

    def __init__(self, cfg, ctx: Context | None = None):
        self.cfg = cfg
        self.ctx = replace(ctx or Context(), warmup_steps=cfg.warmup_steps)
        self.history: History = []
        self.streak: dict[str, int] = {}
        self.clear: dict[str, int] = {}
        self.active: set[str] = set()
        self.intervals: list[float] = []
        self.last_arrival: float | None = None  # monotonic time of the newest step of this attempt
        self.attempt_started: float = time.monotonic()
        self.stalled = False

    @property
    def last_step(self) -> int | None:
        return self.history[-1][0] if self.history else None

    def new_attempt(self, resume_step: int | None, now: float | None = None) -> None:
        """A (re)started training process: forget the steps it will redo, restart the stall clock."""
        if resume_step is not None:
            self.history = [(s, d) for s, d in self.history if s <= resume_step]
        self.attempt_started = time.monotonic() if now is None else now
        self.last_arrival = None
        self.stalled = False

    def observe(self, step: int, data: dict[str, Any], now: float | None = None) -> list[Event]:
        """One metrics line; returns the events it raises (empty when healthy or health is off)."""
        now = time.monotonic() if now is None else now
        if self.history and step <= self.history[-1][0]:
            self.history = [(s, d) for s, d in self.history if s < step]  # a rewritten step replaces the old one
        self.history.append((step, data))
        if self.last_arrival is not None:
            self.intervals = (self.intervals + [now - self.last_arrival])[-100:]
        self.last_arrival = now
        self.stalled = False
        if not self.cfg.enable:
            return []
        return [e for name, rule in RULES.items() if (e := self._judge(name, rule, step))]

    def _judge(self, name: str, rule: Rule, step: int) -> Event | None:
        rule_cfg = getattr(self.cfg, name)  # the rule's settings: trainer.health.<name>
        if rule_cfg.action == "off" or (name not in NO_WARMUP and step <= self.cfg.warmup_steps):
            return None
        violation = rule(self.history, rule_cfg, self.ctx)
        if violation is None:
            self.streak[name] = 0
            self.clear[name] = self.clear.get(name, 0) + 1
            if self.clear[name] >= self.cfg.rearm_steps:
                self.active.discard(name)
            return None
        self.clear[name] = 0
        self.streak[name] = self.streak.get(name, 0) + 1
        if self.streak[name] < rule_cfg.patience or name in self.active:
            return None
        self.active.add(name)
        return Event(step, name, rule_cfg.action, violation.value, violation.threshold, violation.message)

    def check_stall(self, now: float | None = None) -> Event | None:
        """A stall event the first time the current attempt has gone too long without a new step."""
        cfg = self.cfg.stall
        if not self.cfg.enable or cfg.action == "off" or self.stalled:
            return None
        now = time.monotonic() if now is None else now
        started = self.last_arrival is not None
        limit = stall_limit(self.intervals, cfg, started)
        waited = now - (self.last_arrival if started else self.attempt_started)
        if waited <= limit:
            return None
        self.stalled = True
        what = "no new step" if started else "no first step"
        return Event(self.last_step or 0, "stall", cfg.action, round(waited, 2), round(limit, 2),
                     f"{what} for {waited:.1f}s (limit {limit:.1f}s) while the training process is alive",
                     extra={"late_by_s": round(waited - limit, 2)})


# ---------------------------------------------------------------- health.jsonl


def append_event(path: str | Path, event: Event | dict[str, Any]) -> None:
    record = event.to_json() if isinstance(event, Event) else event
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, default=float) + "\n")


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """The events of a health.jsonl in file order; torn or foreign lines are skipped, an absent file is empty."""
    from gspo_cli import untrusted

    out = []
    for record in untrusted.json_lines(path):  # size and depth limits (a run folder may come from others)
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            out.append(record)
    return out

"""What `gspo plan` recommends (pure): the fastest layout or async mode whose preflight raises no warning beyond
those of the preset as given (a preset that already runs colocate_async carries its staleness warning), the ones
tied with it, the faster ones that warn (shown with their warnings, never recommended), the whole run's time and the
command that trains it.

Ties: layouts within `TIE` (1 %) of the best's tokens/device/s are shown as tied, not ranked. 1 % is the display's
rounding: "vs given" prints two decimals (0.01x). It is no measure of the model's precision, which is coarser: its
held-out errors (docs/plan.md, calibration table) are -15 % to +18 % on whole steps and -6 % on tokens/device/s, so
a lead of a few percent is a hint, not a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gspo_cli.plan import run_time
from gspo_cli.plan.layouts import Layout

TIE = 0.01
TIE_WHY = ("within 1 % of the best's tokens/device/s: the display's rounding (0.01x), finer than the model's own "
           "error (held-out -15 %..+18 % a step, docs/plan.md)")


@dataclass
class Recommendation:
    # the fastest without a new preflight warning; when every listed candidate adds one, the fastest of them, with
    # `all_warn` set and its warnings shown as its risks (None: no candidate at all)
    best: Layout | None
    ties: list[Layout] = field(default_factory=list)  # others without warnings within TIE of it
    warned: list[Layout] = field(default_factory=list)  # faster than `best` but preflight warns: not recommended
    own: list[str] = field(default_factory=list)  # the preset-as-given's own warnings (not held against a layout)
    run: run_time.RunTime | None = None  # the whole run at the best's step time
    command: str = ""  # the next command: train the preset with the best's --sets
    run_unknown: str = ""  # why there is no whole-run time (the steps are unknown)
    all_warn: bool = False

    def to_json(self) -> dict[str, Any]:
        def one(lay: Layout) -> dict[str, Any]:
            return {"sets": lay.sets, "mode": lay.mode, "tokens_per_device_per_s":
                    round(lay.prediction.tokens_per_device_per_s, 3), "warnings": lay.verdict.problems}

        return {"best": one(self.best) if self.best else None, "all_warn": self.all_warn, "preset_warnings": self.own,
                "tie_tolerance": TIE, "tie_why": TIE_WHY,
                "ties": [one(lay) for lay in self.ties], "not_recommended_warn": [one(lay) for lay in self.warned],
                "run": self.run.to_json() if self.run else None, "run_unknown": self.run_unknown or None,
                "next_command": self.command}


def new_warnings(lay: Layout, own: list[str]) -> list[str]:
    """The layout's preflight warnings beyond those of the preset as given (`own`)."""
    return [w for w in lay.verdict.problems if w not in own]


def recommend(candidates: list[Layout], preset: Any, preset_ref: str, profile: str, given: list[str],
              own: list[str]) -> Recommendation:
    """The recommendation among `candidates` (the layouts and async modes preflight accepted) for `preset`
    (named `preset_ref` on the command line, with the --set items `given`; `own`: its warnings as given)."""
    from gspo_cli.shell import command

    speed = lambda lay: lay.prediction.tokens_per_device_per_s  # noqa: E731
    ranked = sorted(candidates, key=speed, reverse=True)
    warns = lambda lay: bool(new_warnings(lay, own))  # noqa: E731
    clean = [lay for lay in ranked if not warns(lay)]
    if not ranked:
        return Recommendation(None, own=own)
    best = clean[0] if clean else ranked[0]
    ties = [lay for lay in clean[1:] if speed(lay) >= speed(best) * (1 - TIE)]
    warned = [lay for lay in ranked if warns(lay) and speed(lay) > speed(best)]
    steps, why = run_time.steps_of(preset)
    cmd = command("gspo", "train", "--preset", preset_ref, *[a for s in [*given, *best.sets] for a in ("--set", s)])
    run = run_time.of(steps, best.prediction.step_s, preset, profile) if steps else None
    return Recommendation(best, ties, warned, own, run, cmd, why, all_warn=not clean)

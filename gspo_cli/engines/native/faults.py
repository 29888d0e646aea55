"""Fault injection for the native engine: `GSPO_FAULT=KIND@STEP[,KIND@STEP...]` makes training misbehave at a step,
so the job wrapper's health rules and restarts can be tested on real runs (docs/health.md).

  nan@S    the policy loss of step S is NaN (grad norm NaN too; the update is skipped, as verl does)
  hang@S   step S never finishes: the process sleeps, alive, as a rank stuck in a collective would
  crash@S  the process kills itself with SIGKILL at the start of step S, as a lost node or the OOM killer would
  slow@S   from step S on, each step sleeps 3x its own duration (a throttled device, a degraded link)

`hang` and `crash` fire once per run folder (a marker file `.fault-KIND@STEP` in the run records it), so the
restarted trainer gets past them, and `crash@12,hang@25` meets both in one run; `nan` and `slow` fire in every
attempt. The variable travels with the Ray job (gspo_cli/jobs/client.job_env).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

KINDS = ("nan", "hang", "crash", "slow")
ONE_SHOT = ("hang", "crash")


@dataclass(frozen=True)
class Fault:
    kind: str
    step: int


def parse(spec: str | None) -> list[Fault]:
    from gspo_cli.errors import ConfigError

    faults = []
    for item in filter(None, (part.strip() for part in (spec or "").split(","))):
        kind, _, step = item.partition("@")
        if kind not in KINDS or not step.isdigit() or int(step) < 1:
            raise ConfigError(f"GSPO_FAULT={spec!r}: {item!r} is not KIND@STEP",
                              f"kinds: {', '.join(KINDS)}; steps count from 1, e.g. GSPO_FAULT=crash@3")
        faults.append(Fault(kind, int(step)))
    return faults


class Injector:
    """The faults of this process; the trainer calls `before_step` and `loss` (no-ops without GSPO_FAULT)."""

    def __init__(self, run_dir: Path, spec: str | None = None):
        self.run_dir = Path(run_dir)
        self.faults = parse(os.environ.get("GSPO_FAULT") if spec is None else spec)

    def _at(self, kind: str, step: int) -> bool:
        if not any(f.kind == kind and f.step == step for f in self.faults):
            return False
        if kind in ONE_SHOT:
            marker = self.run_dir / f".fault-{kind}@{step}"
            if marker.exists():
                return False
            marker.touch()
        return True

    def before_step(self, step: int) -> None:
        if self._at("crash", step):
            print(f"GSPO_FAULT crash@{step}: killing this process with SIGKILL", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        if self._at("hang", step):
            print(f"GSPO_FAULT hang@{step}: this step will never finish", file=sys.stderr, flush=True)
            while True:
                time.sleep(3600)

    def loss(self, step: int, loss):
        """The loss, or NaN times it at a `nan` step (keeps the graph, so backward yields NaN gradients)."""
        return loss * math.nan if self._at("nan", step) else loss

    def after_step(self, step: int, seconds: float) -> None:
        if any(f.kind == "slow" and step >= f.step for f in self.faults):
            time.sleep(3 * seconds)

"""Fault injection for the native engine: `GSPO_FAULT=KIND@STEP[,KIND@STEP...]` makes training misbehave at a step,
so the job wrapper's health rules and restarts can be tested on real runs (docs/health.md).

  nan@S    the policy loss of step S is NaN (grad norm NaN too; the update is skipped, as verl does)
  hang@S   step S never finishes: the process sleeps, alive, as a rank stuck in a collective would
  crash@S  the process kills itself with SIGKILL at the start of step S, as a lost node or the OOM killer would
  slow@S   from step S on, each step takes 4x as long on the step timer (a throttled device, a degraded link):
           under `slow` the timer reads a simulated device clock, 1 s per step before S and 4 s from S, so the
           throughput rule sees exactly a 4x fall whatever else the machine runs (the process does not sleep)

`hang` and `crash` fire once per run folder (a marker file `.fault-KIND@STEP` in the run records it), so the
restarted trainer gets past them, and `crash@12,hang@25` meets both in one run; `nan` and `slow` fire in every
attempt. The variable travels with the Ray job only when GSPO_FAULTS_TO_JOBS=1 is set too, and every gspo command
and job announces it on stderr (gspo_cli/jobs/fault_switches.py); `gspo train` checks it before anything is
launched (`check_env`), so a malformed value is one error line in the CLI, not a failed job.

The trainer itself knows nothing of faults: `with_faults(NativeTrainer)` returns a subclass whose overrides wrap
the trainer's own steps (the job's `train-attempt` uses it), so the reference loop carries no test scaffolding.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from gspo_cli.engines.native.trainer import NativeTrainer

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
    """The faults of this process and when each fires."""

    def __init__(self, run_dir: Path, spec: str | None = None) -> None:
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

    def loss(self, step: int, loss: torch.Tensor) -> torch.Tensor:
        """The loss, or NaN times it at a `nan` step (keeps the graph, so backward yields NaN gradients)."""
        return loss * math.nan if self._at("nan", step) else loss

    @property
    def slows(self) -> bool:
        return any(f.kind == "slow" for f in self.faults)

    def step_seconds(self, step: int) -> float:
        """A step's duration on the simulated throttled device: 1 s, 4 s from a `slow` step on."""
        return 4.0 if any(f.kind == "slow" and step >= f.step for f in self.faults) else 1.0


def check_env() -> None:
    """Refuse a malformed GSPO_FAULT in the CLI, before a run folder or job exists (ConfigError: one line)."""
    parse(os.environ.get("GSPO_FAULT"))


def with_faults(trainer_class: type[NativeTrainer], spec: str | None = None) -> type[NativeTrainer]:
    """`trainer_class` itself when GSPO_FAULT (or `spec`) names no fault, else a subclass that injects them:
    crash/hang before the step's first line, NaN in the policy loss (once per micro-batch, so the logged
    actor/pg_loss is the NaN that was backpropagated), slow as the step timer's clock (see `slow@S` above)."""
    faults = parse(os.environ.get("GSPO_FAULT") if spec is None else spec)
    if not faults:
        return trainer_class
    from gspo_cli.algo.losses import PolicyLossOutput

    class FaultInjectingTrainer(trainer_class):  # type: ignore[valid-type, misc]  # a base chosen at run time
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.injector = Injector(self.run_dir, spec)
            self.device_s = 0.0  # the simulated device's clock, under `slow`

        def clock(self) -> float:
            return self.device_s if self.injector.slows else time.perf_counter()

        def train_step(self):
            self.injector.before_step(self.step + 1)
            return super().train_step()

        def update_policy(self, *args, **kwargs):
            out = super().update_policy(*args, **kwargs)  # the last phase inside the step's timer
            self.device_s += self.injector.step_seconds(self.step + 1)
            return out

        def policy_loss(self, *args, **kwargs):
            policy = super().policy_loss(*args, **kwargs)
            return PolicyLossOutput(self.injector.loss(self.step + 1, policy.loss), policy.metrics)

    FaultInjectingTrainer.__name__ = FaultInjectingTrainer.__qualname__ = f"FaultInjecting{trainer_class.__name__}"
    return FaultInjectingTrainer

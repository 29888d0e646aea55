"""Which checkpoint a verl run resumes from: the newest one whose step's metrics line was logged.

verl saves a step's checkpoint before it logs that step's metrics (ray_trainer.fit: `_save_checkpoint`, then
`logger.log`). A job that dies between the two leaves `global_step_N` with no line for step N in metrics.jsonl;
resuming from it would never log step N (seen in CI: a node lost right after a save, steps 1 2 4 5 ...). Resuming
from the newest checkpoint whose step was logged runs step N again, so every step is logged exactly once. Without a
metrics file (nothing logged, or a run gspo did not start) the newest checkpoint is used, as verl itself would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ResumePoint:
    step: int | None  # None: no complete checkpoint
    skipped: list[int] = field(default_factory=list)  # newer checkpoints whose step has no metrics line

    def note(self) -> str | None:
        if not self.skipped or self.step is None:
            return None
        names = ", ".join(f"global_step_{s}" for s in self.skipped)
        return (f"resuming from global_step_{self.step}, not {names}: verl saved it but the job ended before "
                f"logging that step's metrics, so the step runs again and is logged once")


def choose(steps: list[int], logged: set[int]) -> ResumePoint:
    """The resume point among complete checkpoint `steps` (ascending), given the steps with a metrics line.
    Pure: `logged` empty means no metrics to go by (the newest checkpoint)."""
    if not steps:
        return ResumePoint(None)
    if not logged:
        return ResumePoint(steps[-1])
    for i in range(len(steps) - 1, -1, -1):
        if steps[i] in logged:
            return ResumePoint(steps[i], steps[i + 1:])
    return ResumePoint(steps[-1])  # no checkpoint's step was logged: nothing better to go by


def resume_point(run_dir: Path, metrics_file: Path | None = None) -> ResumePoint:
    from gspo_cli import layout
    from gspo_cli.metrics.jsonl import last_per_step

    metrics = metrics_file or layout.metrics_file(run_dir)
    logged = set(last_per_step(metrics)) if metrics.is_file() else set()
    return choose(layout.list_steps(run_dir), logged)

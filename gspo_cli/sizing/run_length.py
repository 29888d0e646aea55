"""How long a run is, stated: steps per epoch, total steps, samples per problem, and the raw file's equivalent.

verl's train dataloader drops the last partial batch (`StatefulDataLoader(..., drop_last=True)` in
verl/trainer/ppo/ray_trainer.py), so an epoch is `rows // train_batch_size` steps. DAPO-Math-17k ships each of
its ~17.4k problems ~103 times (1,791,700 rows); prepare-data deduplicates, so "10 epochs" means 10 passes over each problem here, not the
~1,030 passes the upstream script makes over the raw file. The dry-run shows both, and warns when
deduplication changes the step count by more than `DEDUP_WARN_RATIO`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

DEDUP_WARN_RATIO = 2.0


@dataclass(frozen=True)
class RunLength:
    rows: int  # prepared (deduplicated) training rows
    rows_in: int | None  # rows of the raw file, when the manifest has them
    batch: int
    n: int
    epochs: int
    total_training_steps: int | None

    @property
    def steps_per_epoch(self) -> int:
        return self.rows // self.batch

    @property
    def total_steps(self) -> int:
        return self.total_training_steps or self.steps_per_epoch * self.epochs

    @property
    def samples_per_problem(self) -> float:
        """Responses generated per distinct problem over the run (steps x batch x n / problems)."""
        return self.total_steps * self.batch * self.n / max(1, self.rows)

    @property
    def raw_steps_per_epoch(self) -> int | None:
        return None if self.rows_in is None else self.rows_in // self.batch

    @property
    def raw_total_steps(self) -> int | None:
        """What the same epochs cost on the raw file (the upstream script trains on it as shipped)."""
        raw = self.raw_steps_per_epoch
        return None if raw is None else (self.total_training_steps or raw * self.epochs)

    @property
    def dedup_ratio(self) -> float | None:
        raw = self.raw_steps_per_epoch
        return None if raw is None or self.steps_per_epoch < 1 else raw / self.steps_per_epoch

    def to_json(self) -> dict[str, Any]:
        return {"train_rows": self.rows, "train_rows_raw": self.rows_in, "steps_per_epoch": self.steps_per_epoch,
                "total_steps": self.total_steps, "epochs": self.epochs,
                "samples_per_problem": round(self.samples_per_problem, 1),
                "raw_steps_per_epoch": self.raw_steps_per_epoch, "raw_total_steps": self.raw_total_steps}


def of(preset: Preset, rows: int, rows_in: int | None) -> RunLength:
    t = preset.trainer
    return RunLength(rows=rows, rows_in=rows_in, batch=preset.data.train_batch_size, n=preset.rollout.n,
                     epochs=t.total_epochs, total_training_steps=t.total_training_steps)


def describe(length: RunLength) -> str:
    """One line: this run, then the raw file's equivalent when deduplication changed it."""
    text = (f"{length.total_steps:,} steps x {length.batch} prompts x n {length.n}: each of the {length.rows:,} "
            f"problems sampled ~{length.samples_per_problem:,.0f} times")
    if length.rows_in is not None and length.rows_in != length.rows:
        per_problem_raw = (length.raw_total_steps or 0) * length.batch * length.n / max(1, length.rows)
        text += (f"; on the raw file ({length.rows_in:,} rows, as the upstream script trains) the same settings are "
                 f"{length.raw_steps_per_epoch:,} steps per epoch, {length.raw_total_steps:,} steps, "
                 f"~{per_problem_raw:,.0f} samples per problem")
    return text

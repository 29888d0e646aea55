"""Prepared verl-schema parquet rows and a resumable, seeded prompt sampler."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gspo_cli.errors import DataError

REQUIRED = ("data_source", "prompt", "reward_model")


def load_rows(path: str | Path) -> list[dict]:
    """All rows of a prepared parquet file (small datasets: the native engine runs on one device)."""
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise DataError(f"prepared data not found: {path}", "run: gspo prepare-data --preset <preset>")
    table = pq.read_table(path)
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)} (not the verl row schema)",
                        "re-create it with gspo prepare-data")
    rows = table.to_pylist()
    if not rows:
        raise DataError(f"{path} has no rows")
    return rows


@dataclass
class Cursor:
    """Where the sampler is: epoch and position inside that epoch's permutation (saved in checkpoints)."""

    epoch: int = 0
    position: int = 0


class PromptSampler:
    """Batches of prompts without replacement within an epoch; each epoch's order is a function of (seed, epoch),
    so a cursor alone restores the stream exactly. A short tail at the end of an epoch is dropped (verl's
    drop_last). The order is verl's: its train sampler (verl/trainer/ppo/utils.py create_rl_sampler, torchdata's
    stateful RandomSampler) draws `torch.randperm(n)` from a generator seeded with data.seed (= trainer.seed),
    one permutation per epoch from the same generator; so both engines see the same prompts at the same step
    (a paired comparison of the two engines)."""

    def __init__(self, size: int, batch_size: int, seed: int, shuffle: bool = True, cursor: Cursor | None = None
                 ) -> None:
        if batch_size > size:
            raise DataError(f"train_batch_size={batch_size} is larger than the dataset ({size} rows)",
                            "lower data.train_batch_size or prepare more data")
        self.size, self.batch_size, self.seed, self.shuffle = size, batch_size, seed, shuffle
        self.cursor = cursor or Cursor()

    @property
    def steps_per_epoch(self) -> int:
        return self.size // self.batch_size

    def _order(self, epoch: int) -> list[int]:
        if not self.shuffle:
            return list(range(self.size))
        import torch

        generator = torch.Generator().manual_seed(self.seed)
        for _ in range(epoch):
            torch.randperm(self.size, generator=generator)
        return torch.randperm(self.size, generator=generator).tolist()

    def next_batch(self) -> list[int]:
        if self.cursor.position + self.batch_size > self.size:
            self.cursor = Cursor(self.cursor.epoch + 1, 0)
        start = self.cursor.position
        batch = self._order(self.cursor.epoch)[start:start + self.batch_size]
        self.cursor = Cursor(self.cursor.epoch, start + self.batch_size)
        return batch

"""Helpers shared by the native engine tests (imported as a plain module: pytest puts this folder on sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# The interpreter running the tests (make test: .venv's), never whatever `python` a checkout without .venv finds.
PY = sys.executable


def write_arith(data_dir: Path, train_size: int = 64, val_size: int = 16, max_operand: int = 4) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gspo_cli.data.arith import make_arith_rows

    (data_dir / "arith").mkdir(parents=True, exist_ok=True)
    for split, size in (("train", train_size), ("val", val_size)):
        rows = make_arith_rows(split, size, max_operand, ["+"], 0, "plain")
        pq.write_table(pa.Table.from_pylist(rows), data_dir / "arith" / f"{split}.parquet")


# Small and quick: a few steps of the tiny preset on a few rows.
QUICK_SETS = [
    "data.train_batch_size=4",
    "actor.ppo_mini_batch_size=2",
    "rollout.n=4",
    "trainer.total_training_steps=4",
    "trainer.save_freq=2",
    "trainer.test_freq=2",
    "trainer.max_ckpt_to_keep=2",
    "actor.lr_warmup_steps=2",
]


def quick_preset(sets: list[str], extra: list[str] | None = None):
    from gspo_cli.config.presets import load_preset

    return load_preset("tiny", [*sets, *(extra or [])])

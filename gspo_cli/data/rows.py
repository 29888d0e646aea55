"""verl's dataset row schema and the output tables gspo writes.

A row is `{data_source, prompt: [{role, content}], ability, reward_model: {ground_truth, style}, extra_info}`:
what `verl.utils.dataset.RLHFDataset` reads and what verl's reward functions receive. The raw problem is kept
in `extra_info.problem` so any prompt style can be rebuilt from a prepared file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gspo_cli.data.prompts import chat


def problem_row(
    problem: str,
    answer: str,
    *,
    prompt_style: str,
    data_source: str,
    ability: str,
    index: int,
    split: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "data_source": data_source,
        "prompt": chat(problem, prompt_style),
        "ability": ability,
        "reward_model": {"ground_truth": answer, "style": "rule"},
        "extra_info": {"index": index, "split": split, "problem": problem, **(extra or {})},
    }


def to_table(rows: Iterable[dict[str, Any]]):
    """An arrow table of verl rows; the column order is verl's."""
    import pyarrow as pa

    rows = list(rows)
    table = pa.Table.from_pylist(rows)
    order = [c for c in ("data_source", "prompt", "ability", "reward_model", "extra_info") if c in table.column_names]
    return table.select(order + [c for c in table.column_names if c not in order])


def write_parquet(table, dest) -> None:
    """Write `table` to `dest` (a temp path the caller renames)."""
    import pyarrow.parquet as pq

    pq.write_table(table, dest, compression="zstd")

"""How `gspo prepare-data` prints after its job (with --json the job's result, printed by the job's follower): the
prepared rows per source and split, and each source's folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from gspo_cli.console import out


def render(data_dir: Path, rows: list[dict[str, Any]]) -> None:
    """One row per source x split, then each source's folder (its keyed set) on a line of its own: whole words
    and whole paths at 80 columns (a file column as wide as `dapo-math-17k/<key>/train.parquet` made the
    numbers' headers wrap mid-word)."""
    table = Table(title=f"prepared data in {data_dir}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    columns = (("source", "source"), ("split", "split"), ("rows in", "rows_in"), ("dupes", "duplicates"),
               ("conflicts", "conflicts"), ("rejected", "rejected"), ("rows out", "rows_out"))
    for title, key in columns:
        table.add_column(title, no_wrap=True, justify="left" if key in ("source", "split") else "right")
    for row in rows:
        table.add_row(*[str(row[key]) if row[key] not in (None, "") else "-" for _, key in columns])
    out.print(table)
    folders = dict.fromkeys((row["source"], row["folder"]) for row in rows)
    for source, folder in folders:
        out.print(f"{source}: {folder}", highlight=False, soft_wrap=True)

"""Open a raw dataset file (parquet, JSON lines, JSON) as a pyarrow source, with clear errors for bad files.

Parquet is streamed: `iter_batches` over only the columns a source needs, with a buffered page reader and no
pre-buffering, so memory is bounded by one batch, not the file. JSON inputs are small (AIME) and read whole.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gspo_cli.errors import DataError

BATCH_ROWS = 16_384  # ~10 MB of prompt text: peak memory grows fast with bigger batches, speed does not
_READ_BUFFER = 1 << 20  # bytes per buffered page read: bounds memory for huge row groups


class RawFile:
    """A raw input file: its top-level schema and batch iteration over selected columns."""

    def __init__(self, path: str | Path, source: str):
        import pyarrow as pa

        self.path = Path(path)
        self.source = source
        if not self.path.exists():
            raise DataError(f"{source}: input file {self.path} does not exist", "check the path (--input NAME=PATH)")
        if self.path.is_dir():
            raise DataError(f"{source}: input {self.path} is a folder, not a file", "point --input at the .parquet file")
        if self.path.stat().st_size == 0:
            raise DataError(f"{source}: input file {self.path} is empty (0 bytes)", "download it again")
        self._parquet = None
        self._table = None
        suffix = self.path.suffix.lower()
        try:
            if suffix in (".jsonl", ".json", ".ndjson"):
                self._table = _read_json(self.path)
                self.schema = self._table.schema
                self.num_rows = self._table.num_rows
            else:
                import pyarrow.parquet as pq

                self._parquet = pq.ParquetFile(
                    self.path, memory_map=False, buffer_size=_READ_BUFFER, pre_buffer=False
                )
                self.schema = self._parquet.schema_arrow
                self.num_rows = self._parquet.metadata.num_rows
        except DataError:
            raise
        except (pa.ArrowException, OSError, ValueError) as exc:
            kind = "JSON" if suffix in (".jsonl", ".json", ".ndjson") else "parquet"
            raise DataError(
                f"{source}: cannot read {self.path} as {kind}: {str(exc).splitlines()[0][:200]}",
                "the file is corrupt or not a dataset file: download it again",
            ) from None
        if self.num_rows == 0:
            raise DataError(f"{source}: input file {self.path} has no rows", "download it again")

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    def field(self, name: str):
        return self.schema.field(name)

    def require(self, expected: dict[str, str], *, shape: str = "") -> None:
        """Fail naming what is missing and what was found, with close matches for misnamed columns."""
        missing = [c for c in expected if c not in self.columns]
        if not missing:
            return
        lower = {c.lower(): c for c in self.columns}
        guesses = []
        for c in missing:
            close = lower.get(c.lower()) or next(iter(difflib.get_close_matches(c, self.columns, n=1)), None)
            if close:
                guesses.append(f"'{close}' -> '{c}'")
        want = ", ".join(f"{c} [{d}]" if d else c for c, d in expected.items())
        raise DataError(
            f"{self.source}: {self.path.name} is missing column(s) {', '.join(missing)}; "
            f"found: {', '.join(self.columns) or '(none)'}",
            (f"rename {', '.join(guesses)}; " if guesses else "")
            + f"expected{(' ' + shape) if shape else ''}: {want}",
        )

    def batches(self, columns: list[str], batch_rows: int | None = None) -> Iterator[Any]:
        """Record batches holding `columns` (top-level names or dotted struct paths such as `a.b`)."""
        import pyarrow as pa

        batch_rows = batch_rows or BATCH_ROWS
        if self._table is not None:
            table = _select(self._table, columns)
            yield from table.to_batches(max_chunksize=batch_rows)
            return
        try:
            yield from self._parquet.iter_batches(batch_size=batch_rows, columns=columns, use_threads=True)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(
                f"{self.source}: {self.path} is unreadable part-way through: {str(exc).splitlines()[0][:200]}",
                "the file is truncated or corrupt: download it again",
            ) from None


def _read_json(path: Path):
    import json

    import pyarrow as pa

    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not rows:
        return pa.table({})
    if not all(isinstance(r, dict) for r in rows):
        raise ValueError("expected one JSON object per row")
    return pa.Table.from_pylist(rows)


def _select(table, columns: list[str]):
    """Top-level columns of an in-memory table (a dotted path selects its whole top-level column)."""
    tops = list(dict.fromkeys(c.partition(".")[0] for c in columns))
    return table.select(tops)

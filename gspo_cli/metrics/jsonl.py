"""metrics.jsonl in verl's file-logger format: one `{"step": N, "data": {...}}` line per training step."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gspo_cli.fsutil import atomic_write_text


def _clean(value):
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value


class MetricsWriter:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def log(self, step: int, data: dict) -> None:
        line = json.dumps({"step": step, "data": {k: _clean(v) for k, v in data.items()}}, default=float)
        # One write of a whole line, flushed and synced, so a kill leaves at most one torn last line.
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def truncate_after(self, step: int) -> int:
        """Keep only lines with step <= `step` (and drop a torn line); returns how many lines were dropped.

        Called on resume from the checkpoint of `step`: the steps after it are recomputed, so their old lines
        must go or the file would hold them twice.
        """
        if not self.path.is_file():
            return 0
        kept, dropped = [], 0
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                keep = int(record["step"]) <= step
            except (ValueError, KeyError, TypeError):
                keep = False
            if keep:
                kept.append(line)
            else:
                dropped += 1
        if dropped:
            atomic_write_text(self.path, "".join(f"{line}\n" for line in kept))
        return dropped


def read_metrics(path: str | Path) -> list[dict]:
    """The records of a metrics file in file order; a torn last line (a kill mid-write) is skipped."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records

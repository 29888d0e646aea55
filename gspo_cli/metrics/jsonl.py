"""metrics.jsonl in verl's file-logger format: one `{"step": N, "data": {...}}` line per training step.

The one reader and writer of the file, for both engines, `gspo report` and the verl job wrapper:

- `read_metrics` / `iter_records`: the records in file order; a torn last line (a kill mid-write) or a foreign
  line is skipped, never an error.
- `read_series`: metric -> [(step, value)] for charts; a step logged twice (resume) keeps its last line, whole.
- `append_step` (or `MetricsWriter.log`): one whole line, flushed and synced; a step not after the last one in the
  file is refused (`MetricsOrderError`).
- `order_problems`: duplicated and out-of-order steps (a file two jobs wrote), for `report` and `runs show`.
- `truncate_after`: keep steps <= N, for a resume from the checkpoint of step N.
- `set_aside_for_resume` / `restore_after_resume`: the same for verl, whose logger truncates the file on start.
- `Tail`: follow a growing file and hand out each new complete record once (progress events).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

from gspo_cli import untrusted
from gspo_cli.errors import GspoError
from gspo_cli.fsutil import atomic_write_text

Series = dict[str, list[tuple[int, float]]]

# Where `set_aside_for_resume` keeps a verl run's history while the resumed job writes a fresh metrics.jsonl.
ASIDE_NAME = "metrics.before-resume.jsonl"


def parse_line(line: str) -> dict | None:
    """The record of one line, or None for a blank, torn or foreign line. `step` is an int, `data` a dict."""
    line = line.strip()
    if not line:
        return None
    try:
        record = untrusted.loads(line)  # depth-checked: a run folder may come from someone else
        step = int(record["step"])
        data = record["data"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(data, dict):
        return None
    return {"step": step, "data": data}


def _lines(path: Path) -> Iterator[tuple[str, dict]]:
    """(raw line, record) for every readable line of the file; raw lines are copied verbatim on rewrite."""
    for line in untrusted.lines(path):  # size limits; a symlink or FIFO in a run folder reads as nothing
        record = parse_line(line)
        if record is not None:
            yield line, record


def iter_records(path: str | Path) -> Iterator[dict]:
    """The records of a metrics file in file order, skipping torn and foreign lines; nothing if it is absent."""
    for _, record in _lines(Path(path)):
        yield record


def read_metrics(path: str | Path) -> list[dict]:
    """All records of a metrics file in file order (see `iter_records`)."""
    return list(iter_records(path))


def last_per_step(path: str | Path) -> dict[int, dict]:
    """step -> data, sorted by step; a step logged again (resume) is replaced whole, so no stale keys survive."""
    by_step = {record["step"]: record["data"] for record in iter_records(path)}
    return {step: by_step[step] for step in sorted(by_step)}


def read_series(path: str | Path) -> Series:
    """metric -> [(step, value)] sorted by step; the last line for a step wins; non-numbers are skipped."""
    series: Series = {}
    for step, data in last_per_step(path).items():
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            series.setdefault(key, []).append((step, float(value)))
    return series


def _clean(value):
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value


class MetricsOrderError(GspoError):
    """A step that is not after the last one in the file: a second writer, or a resume that did not truncate."""


def last_step(path: str | Path) -> int | None:
    """The step of the file's last whole record (read from its end), or None for a missing or empty file."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            chunk = 1 << 16
            while True:
                start = max(0, size - chunk)
                fh.seek(start)
                lines = fh.read().decode("utf-8", errors="replace").splitlines()
                for line in reversed(lines[1:] if start else lines):  # the first may be cut
                    record = parse_line(line)
                    if record is not None:
                        return record["step"]
                if start == 0:
                    return None
                chunk *= 4
    except FileNotFoundError:
        return None


def append_step(path: str | Path, step: int, data: dict) -> None:
    """Append the line of one step: one write of a whole line, flushed and synced, so a kill leaves at most one
    torn last line (which every reader here skips). A step not after the file's last one is refused: one writer
    per run, and a resume truncates to its checkpoint first (`truncate_after`)."""
    last = last_step(path)
    if last is not None and step <= last:
        raise MetricsOrderError(f"{path}: refusing to log step {step} after step {last}",
                                "another job writes this run, or a resume did not truncate the metrics to its "
                                "checkpoint; `gspo runs show` names the run's job")
    line = json.dumps({"step": step, "data": {k: _clean(v) for k, v in data.items()}}, default=float)
    with open(path, "a+b") as fh:
        # A torn last line (a kill mid-write) is ended first, so this line is never glued onto it.
        torn = fh.seek(0, os.SEEK_END) > 0 and fh.seek(-1, os.SEEK_END) >= 0 and fh.read(1) != b"\n"
        fh.write((("\n" if torn else "") + line + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def order_problems(path: str | Path) -> dict[str, list[int]]:
    """Steps logged more than once and steps that came after a later step, in file order: a file written by two
    jobs at once. `gspo report` and `gspo runs show` flag them; empty lists for a healthy file."""
    seen: set[int] = set()
    duplicated: list[int] = []
    out_of_order: list[int] = []
    previous: int | None = None
    for record in iter_records(path):
        step = record["step"]
        if step in seen:
            duplicated.append(step)
        elif previous is not None and step < previous:
            out_of_order.append(step)
        seen.add(step)
        previous = step
    return {"duplicated": duplicated, "out_of_order": out_of_order}


def describe_order_problems(problems: dict[str, list[int]]) -> str | None:
    """One line for a damaged file ("63 duplicated steps (first 12), 5 out of order (first 40)"), else None."""
    parts = [f"{len(steps)} {what} step(s) (first {steps[0]})"
             for what, steps in (("duplicated", problems["duplicated"]), ("out-of-order", problems["out_of_order"]))
             if steps]
    return ", ".join(parts) or None


def truncate_after(path: str | Path, step: int) -> int:
    """Keep only lines with step <= `step` (and drop torn lines); returns how many lines were dropped.

    Called on resume from the checkpoint of `step`: the steps after it are recomputed, so their old lines
    must go or the file would hold them twice.
    """
    path = Path(path)
    if not path.is_file():
        return 0
    total = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
    kept = [line for line, record in _lines(path) if record["step"] <= step]
    if len(kept) != total:
        atomic_write_text(path, "".join(f"{line}\n" for line in kept))
    return total - len(kept)


class MetricsWriter:
    """The metrics file of one run: `log` appends a step, `truncate_after` prepares a resume."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def log(self, step: int, data: dict) -> None:
        append_step(self.path, step, data)

    def truncate_after(self, step: int) -> int:
        return truncate_after(self.path, step)


def set_aside_for_resume(metrics: str | Path, step: int) -> Path | None:
    """Move the history up to `step` into `metrics.before-resume.jsonl` and remove metrics.jsonl.

    verl's file logger opens metrics.jsonl with "wb" (truncates), so a resumed run would lose its history;
    `restore_after_resume` puts it back in front of what the resumed run wrote. An aside file still there is the
    history of a resumed job killed before it could restore it: it comes first, then what that job wrote (one
    line per step, the later one wins). Returns the aside file, or None when there was no history.
    """
    metrics = Path(metrics)
    aside = metrics.with_name(ASIDE_NAME)
    sources = [p for p in (aside, metrics) if p.exists()]
    if not sources:
        return None
    kept = _merged([record for source in sources for _, record in _lines(source) if record["step"] <= step])
    atomic_write_text(aside, "".join(_line(r) for r in kept))
    metrics.unlink(missing_ok=True)
    return aside


def restore_after_resume(metrics: str | Path, aside: str | Path) -> None:
    """metrics.jsonl = the kept history + what the resumed run wrote. verl resumes training at step+1, but with
    val_before_train it first logs the validation of the checkpoint it resumed from under that checkpoint's step:
    that line is merged into the history's line of the step (one line per step, the training metrics kept)."""
    metrics, aside = Path(metrics), Path(aside)
    history = [record for _, record in _lines(aside)]
    new = [record for _, record in _lines(metrics)] if metrics.exists() else []
    atomic_write_text(metrics, "".join(_line(r) for r in _merged(history + new)))
    aside.unlink()


def _merged(records: list[dict]) -> list[dict]:
    """Records in order with the lines of one step merged into one (a later value wins key by key)."""
    out: dict[int, dict] = {}
    for record in records:
        out.setdefault(record["step"], {}).update(record["data"])
    return [{"step": step, "data": data} for step, data in sorted(out.items())]


def _line(record: dict) -> str:
    return json.dumps({"step": record["step"], "data": {k: _clean(v) for k, v in record["data"].items()}},
                      default=float) + "\n"


class Tail:
    """Follow a metrics file from byte `start_at`: each `poll()` returns the records of the complete lines
    written since the last poll. A line still being written waits for its newline; a file that shrank
    (reopened with "wb") is read again from its start."""

    def __init__(self, path: str | Path, start_at: int = 0):
        self.path = Path(path)
        self.pos = start_at
        self.buf = b""

    def poll(self) -> list[dict]:
        if not self.path.exists():
            return []
        if self.path.stat().st_size < self.pos:
            self.pos, self.buf = 0, b""
        with open(self.path, "rb") as fh:
            fh.seek(self.pos)
            chunk = fh.read()
            self.pos = fh.tell()
        *lines, self.buf = (self.buf + chunk).split(b"\n")
        records = (parse_line(line.decode("utf-8", errors="replace")) for line in lines)
        return [record for record in records if record is not None]

"""Structured progress events that job entrypoints print and `gspo` renders.

An entrypoint (running as a Ray job or in-process) calls `progress(...)`, `message(...)`, `health(...)` or
`result(...)`.
Each becomes one stdout line `@@gspo {json}`. The follower (`jobs.follow`) parses these lines back with
`parse_line` and draws a progress bar; any other line is shown as a plain log line. In-process runs install a
sink with `set_sink` so the same calls render directly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

PREFIX = "@@gspo "

_sink: Callable[[dict[str, Any]], None] | None = None


def set_sink(sink: Callable[[dict[str, Any]], None] | None) -> Callable[[dict[str, Any]], None] | None:
    """Route events to `sink` instead of stdout; returns the previous sink so callers can restore it."""
    global _sink
    previous, _sink = _sink, sink
    return previous


def emit(kind: str, **fields: Any) -> None:
    event = {"kind": kind, **fields}
    if _sink is not None:
        _sink(event)
        return
    sys.stdout.write(PREFIX + json.dumps(event, default=float) + "\n")
    sys.stdout.flush()


def progress(step: int, total: int | None, *, task: str = "", metrics: dict[str, float] | None = None) -> None:
    """One unit of work done: `step` of `total` (None when unknown), with a few headline metrics."""
    emit("progress", step=step, total=total, task=task, metrics=metrics or {})


def message(text: str) -> None:
    emit("message", text=text)


def health(record: dict[str, Any]) -> None:
    """A run-health event (a rule fired, a stall, a restart): one health.jsonl record (gspo_cli/metrics/health.py).
    The follower shows the newest one as the health line under the progress bar."""
    emit("health", **{k: v for k, v in record.items() if k != "kind"})


def result(payload: dict[str, Any]) -> None:
    """The final machine-readable result of the job (what `--json` prints)."""
    emit("result", payload=payload)


def parse_line(line: str) -> dict[str, Any] | None:
    """The event on this log line, or None for an ordinary line (or a garbled event)."""
    idx = line.find(PREFIX)
    if idx < 0:
        return None
    try:
        event = json.loads(line[idx + len(PREFIX):])
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and "kind" in event else None

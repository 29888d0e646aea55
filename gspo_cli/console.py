"""Two consoles: data to stdout (`out`), chatter and errors to stderr (`err`), so `--json` output always parses;
and the one colour map of every status gspo prints (checks, Ray jobs, runs)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def print_json(obj: Any) -> None:
    """Plain JSON on stdout (no rich markup or wrapping), for scripts."""
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
    sys.stdout.flush()


def emit(json_out: bool, data: Any, text: Callable[..., object], *args: Any) -> None:
    """The one output path of every command: with --json its `data` as JSON on stdout, else its view's `text(*args)`.
    Each command group's view module (accept/view.py, eval/view.py, plan/view.py, runs/view.py, ...) holds both."""
    if json_out:
        print_json(data)
    else:
        text(*args)


# Status words of checks (gspo_cli.checks), Ray jobs (SUCCEEDED, ...) and runs (finished, ...) -> rich style.
STATUS_STYLE = {
    "ok": "green", "succeeded": "green", "finished": "green",
    "info": "cyan", "running": "cyan", "pending": "cyan",
    "warn": "yellow", "stopped": "yellow", "incomplete": "yellow",
    "error": "bold red", "failed": "red", "killed": "red",
    "skip": "dim",
}


def styled(status: str) -> str:
    """The status as rich markup in its colour (white for a word the map does not know)."""
    return f"[{STATUS_STYLE.get(str(status).lower(), 'white')}]{status}[/]"

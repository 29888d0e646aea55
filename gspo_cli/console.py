"""Two consoles: data to stdout (`out`), chatter and errors to stderr (`err`), so `--json` output always parses."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def print_json(obj: Any) -> None:
    """Plain JSON on stdout (no rich markup or wrapping), for scripts."""
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
    sys.stdout.flush()

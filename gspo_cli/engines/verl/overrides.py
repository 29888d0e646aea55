"""Hydra override text: a Python value rendered so Hydra parses it back to the same type, an override's key, and
the ordered table of overrides the compile step builds (compile.py, megatron.py), each with the preset key it
came from."""

from __future__ import annotations

import re
from typing import Any


def hydra_value(value: Any) -> str:
    """Render a Python value as a Hydra override value that parses back to the same type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if ("." in text or "e" in text or "inf" in text or "nan" in text) else text + ".0"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    text = str(value)
    # Bare strings are fine for paths and identifiers; anything Hydra could read as another type, or that holds
    # grammar characters, is single-quoted.
    if re.fullmatch(r"[A-Za-z_/~][\w./~:-]*", text) and text.lower() not in (
        "true", "false", "null", "none", "inf", "nan"
    ):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def override_key(override: str) -> str:
    """`+a.b=c` / `++a.b=c` / `~a.b` -> `a.b`."""
    key = override.split("=", 1)[0]
    return key.lstrip("+~")


class Table:
    """The overrides being built, in order, with the preset key each came from."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.origins: dict[str, str] = {}
        self.notes: list[str] = []

    def put(self, key: str, value: Any, origin: str, *, add: bool = False) -> None:
        """Set `key`; a key set again replaces its earlier value (Hydra refuses a key given twice)."""
        line = f"{'+' if add else ''}{key}={hydra_value(value)}"
        if key in self.origins:
            self.out = [line if override_key(o) == key else o for o in self.out]
        else:
            self.out.append(line)
        self.origins[key] = origin

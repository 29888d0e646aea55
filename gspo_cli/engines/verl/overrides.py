"""Hydra override text: a Python value rendered so Hydra parses it back to the same type, an override's key, the
ordered table of overrides the compile step builds, each with the preset key it came from, and the declarative
rows it is built from (compile.py, megatron.py, actor_keys.py, explicit_defaults.py).

A row names the preset key it reads and the verl key it writes; its origin is the key read, so a plain copy cannot
name another. A value gspo derives from the run itself (its folders, `--resume`) says so (`derived: ...`); the few
real transforms are small functions called in the table's order (`Step`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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


def read(preset: Any, path: str) -> Any:
    """The preset's value at a dotted key path (`rollout.val.n`)."""
    out = preset
    for part in path.split("."):
        out = getattr(out, part)
    return out


def is_set(value: Any) -> bool:
    return value is not None


def not_one(value: Any) -> bool:
    return value != 1


def always(constant: Any) -> Callable[[Any], Any]:
    """`via` for a row whose value is fixed once its preset key asks for it (`when`)."""
    return lambda _: constant


@dataclass(frozen=True)
class Row:
    """One verl key read from one preset key (`path`, or the first of several that is set), through `via`, left out
    unless `when` holds for the value read. The origin is the preset key read."""

    key: str
    path: str | tuple[str, ...]
    via: Callable[[Any], Any] | None = None
    when: Callable[[Any], bool] | None = None
    add: bool = False

    def apply(self, t: Table, call: Any) -> None:
        for path in (self.path,) if isinstance(self.path, str) else self.path:
            value = read(call.preset, path)
            if value is not None:
                break
        if self.when is None or self.when(value):
            t.put(self.key, value if self.via is None else self.via(value), path, add=self.add)


def copies(prefix: str, section: str, *names: str) -> tuple[Row, ...]:
    """Rows of keys verl and the preset spell alike under their own prefixes: `prefix.NAME` from `section.NAME`."""
    return tuple(Row(f"{prefix}.{name}", f"{section}.{name}") for name in names)


@dataclass(frozen=True)
class Section:
    """Every item of a preset section (`path`; absent when None) under verl's `prefix`, each from its own key."""

    prefix: str
    path: str
    items: Callable[[Any], dict[str, Any]]
    added: Callable[[str], bool] = lambda key: False  # '+': a key verl's schema does not have

    def apply(self, t: Table, call: Any) -> None:
        section = read(call.preset, self.path)
        if section is not None:
            for key, value in self.items(section).items():
                t.put(f"{self.prefix}.{key}", value, f"{self.path}.{key}", add=self.added(key))


@dataclass(frozen=True)
class Derived:
    """A verl key whose value gspo sets itself (`value` of the compile call: the run's folders, `--resume`, gspo's own
    row schema), not a preset key's; origin `derived: <about>`."""

    key: str
    about: str
    value: Callable[[Any], Any]

    def apply(self, t: Table, call: Any) -> None:
        t.put(self.key, self.value(call), f"derived: {self.about}")


@dataclass(frozen=True)
class Only:
    """Entries that apply only when `when` holds for the compile call (the preset and the run), else `otherwise`."""

    when: Callable[[Any], bool]
    entries: tuple[Entry, ...]
    otherwise: tuple[Entry, ...] = ()

    def apply(self, t: Table, call: Any) -> None:
        apply(t, call, self.entries if self.when(call) else self.otherwise)


@dataclass(frozen=True)
class Step:
    """A real transform: a named function that puts what it computes (its origins say what it read)."""

    run: Callable[[Table, Any], None]

    def apply(self, t: Table, call: Any) -> None:
        self.run(t, call)


Entry = Row | Section | Derived | Only | Step


def apply(t: Table, call: Any, entries: Iterable[Entry]) -> None:
    """Put every entry, in order, for one compile call (`call.preset` is the preset)."""
    for entry in entries:
        entry.apply(t, call)

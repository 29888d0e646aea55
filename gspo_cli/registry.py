"""The one registry pattern of gspo: name -> entry, each entry registered where it is defined.

The model is the policy-loss registry (gspo_cli/algo/losses.py): a module-level `Registry` and a decorator on the
definition, so adding an entry is one decorated definition and nothing else changes. The same pattern holds the
engines (engines/__init__.py: spec per `trainer.engine`), the job kinds (job_kinds.py), eval's generation backends
(eval/backends/__init__.py), the reward backends (rewards/backends.py: `reward.verifier` and `gspo score
--compare` peers) and the health rules (metrics/health.py). Entries that would import something heavy are
loaders (a function with the import inside), so reading a registry stays light (`gspo --help`).

A `Registry` is a dict (every dict use keeps working) that refuses a name registered twice and says, for an
unknown name, which names there are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from gspo_cli.errors import ConfigError

T = TypeVar("T")
F = TypeVar("F")


class Registry(dict[str, T], Generic[T]):
    """Named entries of one kind (`what`: "engine", "job kind", ...); `key` names the setting that picks one."""

    def __init__(self, what: str, *, key: str | None = None) -> None:
        super().__init__()
        self.what = what
        self.key = key or what

    def add(self, name: str, entry: T) -> T:
        if name in self:
            raise ValueError(f"{self.what} {name!r} registered twice")
        self[name] = entry
        return entry

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated definition itself under `name`."""

        def decorator(entry: T) -> T:
            return self.add(name, entry)

        return decorator

    def register_as(self, name: str, make: Callable[[F], T]) -> Callable[[F], F]:
        """Decorator: register `make(definition)` under `name` and leave the definition as it is (an entry built
        around a function, e.g. a job kind around its loader)."""

        def decorator(definition: F) -> F:
            self.add(name, make(definition))
            return definition

        return decorator

    def names(self) -> list[str]:
        return sorted(self)

    def lookup(self, name: str) -> T:
        """The entry `name`; one ConfigError naming the known ones when there is none."""
        try:
            return self[name]
        except KeyError:
            raise ConfigError(f"unknown {self.key} {name!r}", f"use one of: {', '.join(self.names())}") from None

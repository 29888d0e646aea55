"""YAML from files gspo did not write (presets, run folders' config.yaml, `--set` values), read with limits.

PyYAML's safe loader runs no code, but it expands every alias (a 400-byte file of nested aliases grows to
gigabytes), follows a self-referencing alias forever and recurses once per nesting level (a 20,000-deep list
ends in RecursionError). `check` walks the event stream first (PyYAML's parser is iterative, so this costs no
recursion) and refuses, in one line, a text over `MAX_BYTES`, nesting deeper than `MAX_DEPTH`, or more than
`MAX_ALIASES` aliases; `walk` then visits the composed nodes as a consumer would, aliases expanded, within a
`Budget` (values, depth, no node inside itself). `compose` and `load` (`yaml.safe_load`) do both first.
"""

from __future__ import annotations

from typing import Any

import yaml

from gspo_cli.errors import ConfigError

MAX_BYTES = 1 << 20  # a preset is a few KiB; the largest built-in is under 12 KiB
MAX_DEPTH = 64  # mappings and lists inside each other (the built-ins reach 5)
MAX_ALIASES = 100  # `*name` references in one document (the built-ins use none)
MAX_VALUES = 100_000  # values a document expands to, aliases counted each time they are used

HINT = "a preset is a plain YAML mapping of a few KiB (see docs/presets.md); YAML aliases are rarely needed"


def _where(file: str, mark: Any) -> str:
    return f"{file}:{mark.line + 1}" if mark is not None else file


def check(text: str, file: str) -> None:
    """Refuse `text` (from `file`) over the limits above, before anything is composed. YAML syntax errors are
    raised as PyYAML's own (the callers turn them into one line with the position)."""
    if len(text) > MAX_BYTES:
        raise ConfigError(f"{file}: {len(text)} bytes; gspo reads at most {MAX_BYTES} bytes of YAML", HINT)
    depth = aliases = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"{_where(file, event.start_mark)}: nested deeper than {MAX_DEPTH} levels", HINT)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise ConfigError(f"{_where(file, event.start_mark)}: more than {MAX_ALIASES} YAML aliases", HINT)


class Budget:
    """What building Python values from composed nodes may cost: `MAX_VALUES` values, `MAX_DEPTH` levels (an
    alias inside a deep node adds its own depth), and no node inside itself (a self-referencing alias)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.values = 0
        self.path: list[int] = []  # ids of the nodes being built, outermost first

    def enter(self, node: yaml.Node) -> None:
        self.values += 1
        if id(node) in self.path:
            raise ConfigError(f"{_where(self.file, node.start_mark)}: a YAML alias refers to a node that contains it",
                              HINT)
        if len(self.path) >= MAX_DEPTH:
            raise ConfigError(f"{_where(self.file, node.start_mark)}: nested deeper than {MAX_DEPTH} levels (with "
                              "aliases expanded)", HINT)
        if self.values > MAX_VALUES:
            raise ConfigError(f"{self.file}: expands to more than {MAX_VALUES} values (YAML aliases)", HINT)
        self.path.append(id(node))

    def leave(self) -> None:
        self.path.pop()


def walk(node: yaml.Node, budget: Budget) -> None:
    """Visit every value `node` expands to, within `budget` (ConfigError past it)."""
    budget.enter(node)
    try:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(key, budget)
                walk(value, budget)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item, budget)
    finally:
        budget.leave()


def compose(text: str, file: str) -> yaml.Node | None:
    """The composed document of `text`, checked against every limit above (None for an empty document)."""
    check(text, file)
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if node is not None:
        walk(node, Budget(file))
    return node


def load(text: str, file: str) -> Any:
    """`yaml.safe_load(text)` within the limits (ConfigError past them; yaml.YAMLError for bad syntax)."""
    node = compose(text, file)
    return None if node is None else yaml.SafeLoader("").construct_document(node)

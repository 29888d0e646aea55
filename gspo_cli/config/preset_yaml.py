"""A preset file's YAML as data with line numbers: the mapping, and `file:line` of every key path (`Origins`).

Read within config/yaml_limits.py's limits; a key must be a plain name and may appear once per mapping; every
error names `file:line` and never echoes a key that does not look like one (`key_text`).
"""

from __future__ import annotations

import copy
import re
from typing import Any, cast

import yaml

from gspo_cli.errors import ConfigError

# key path (tuple of str) -> "file:line"
Origins = dict[tuple[str, ...], str]


def _node_to_data(node: yaml.Node, file: str, prefix: tuple[str, ...], origins: Origins) -> Any:
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(f"{file}:{key_node.start_mark.line + 1}: a key must be a plain name, found a "
                                  f"{cast(Any, key_node).id}", "keys are names such as `model:` or `lr:`")
            key = str(key_node.value)
            path = (*prefix, key)
            if key in out:
                raise ConfigError(
                    f"{file}:{key_node.start_mark.line + 1}: duplicate key '{'.'.join(map(key_text, path))}'",
                    "each key may appear once per mapping",
                )
            origins[path] = f"{file}:{key_node.start_mark.line + 1}"
            out[key] = _node_to_data(value_node, file, path, origins)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            item_path = (*prefix, str(i))
            origins[item_path] = f"{file}:{item.start_mark.line + 1}"
            items.append(_node_to_data(item, file, item_path, origins))
        return items
    return _scalar(cast(yaml.ScalarNode, node))  # a composed node that is neither mapping nor sequence


_KEY_LIKE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")


def key_text(key: object) -> str:
    """A key as error messages show it: as written when it looks like a key, else a placeholder, so a file that
    is not a preset (`extends: /etc/shadow`) never has its lines echoed."""
    text = str(key)
    return text if _KEY_LIKE.fullmatch(text) else "<a key that is not a name>"


_SCALAR_LOADER = yaml.SafeLoader("")


def _scalar(node: yaml.ScalarNode) -> Any:
    return _SCALAR_LOADER.construct_object(node, deep=True)


# (file, text) -> what parse_yaml made of it, for this process: finding a preset by name parses every built-in
# (their names and aliases are inside), and `gspo train` finds its preset twice (the command, then the engine's
# plan); PyYAML's pure-Python parser makes each lookup ~0.2 s CPU. Keyed by the text, so an edited file is parsed
# again; callers get copies.
_PARSED: dict[tuple[str, str], tuple[dict[str, Any], Origins]] = {}
_PARSED_MAX = 64


def parse_yaml(text: str, file: str) -> tuple[dict[str, Any], Origins]:
    """The mapping in `text` (from `file`) and the `file:line` of each key path; ConfigError when it is not a YAML
    mapping within config/yaml_limits.py's limits."""
    parsed = _PARSED.get((file, text))
    if parsed is None:
        parsed = _parse_yaml(text, file)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[(file, text)] = parsed
    return copy.deepcopy(parsed)


def _parse_yaml(text: str, file: str) -> tuple[dict[str, Any], Origins]:
    from gspo_cli.config import yaml_limits

    try:
        node = yaml_limits.compose(text, file)  # size, depth and alias limits: one line, never a RecursionError
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else file
        raise ConfigError(f"{where}: YAML syntax error: {exc.problem or exc}", "fix the YAML at that position") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: YAML error: {exc}", "fix the YAML syntax") from None
    if node is None:
        raise ConfigError(f"{file}: the preset file is empty", "a preset is a YAML mapping with name, model, data, ...")
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(
            f"{file}:{node.start_mark.line + 1}: a preset must be a YAML mapping, found {cast(Any, node).id}",  # every concrete node class has an id
            "start the file with keys such as `name:`, `model:`, `data:`",
        )
    origins: Origins = {}
    try:
        data = _node_to_data(node, file, (), origins)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else file
        raise ConfigError(f"{where}: {exc.problem}", "fix the YAML value") from None
    return data, origins

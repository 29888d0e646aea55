"""Find, load, inherit, override and validate presets.

Lookup order for a name: built-in name or alias -> `$GSPO_HOME/presets/<name>.yaml` -> a file path.
`extends: other` deep-merges this file onto another preset. `--set a.b=c` overrides are applied last and coerced
by the schema. Every error names the key path and, where the value came from a file, `file:line`.
"""

from __future__ import annotations

import copy
import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from gspo_cli import layout
from gspo_cli.config.preset_yaml import Origins, key_text, parse_yaml
from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


@dataclass
class PresetSource:
    """A preset file as found: where it is, its raw mapping, and where each key came from."""

    name: str
    path: Path
    builtin: bool
    data: dict[str, Any]
    origins: Origins = field(default_factory=dict)

    @property
    def header(self) -> str:
        """The comment block at the top of the file (what it is, hardware, commands)."""
        lines = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            lines.append(line[1:].strip())
        return "\n".join(lines).strip()


# ---------------------------------------------------------------- lookup


def builtin_sources() -> list[PresetSource]:
    sources = []
    for path in sorted(layout.builtin_presets_dir().glob("*.yaml")):
        sources.append(_read_source(path, builtin=True))
    return sources


def _read_source(path: Path, *, builtin: bool) -> PresetSource:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read preset file {path}: {exc.strerror}", "check the path and permissions") from None
    data, origins = parse_yaml(text, str(path))
    raw_name = data.get("name")
    name = raw_name if isinstance(raw_name, str) else path.stem
    return PresetSource(name=name, path=path, builtin=builtin, data=data, origins=origins)


def _aliases(source: PresetSource) -> list[str]:
    aliases = source.data.get("aliases") or []
    return [str(a) for a in aliases] if isinstance(aliases, list) else []


def user_sources() -> list[PresetSource]:
    """The presets in $GSPO_HOME/presets (found by name, after the built-ins)."""
    user_dir = layout.user_presets_dir()
    if not user_dir.is_dir():
        return []
    return [_read_source(p, builtin=False) for p in sorted(user_dir.glob("*.yaml"))]


def available_names() -> list[str]:
    names = []
    for source in builtin_sources():
        names.append(source.name)
        names.extend(_aliases(source))
    user_dir = layout.user_presets_dir()
    if user_dir.is_dir():
        names.extend(p.stem for p in sorted(user_dir.glob("*.yaml")))
    return names


def find_source(name_or_path: str) -> PresetSource:
    for source in builtin_sources():
        if name_or_path == source.name or name_or_path in _aliases(source):
            return source
    user_file = layout.user_presets_dir() / f"{name_or_path}.yaml"
    if user_file.is_file():
        return _read_source(user_file, builtin=False)
    candidate = Path(name_or_path).expanduser()
    if candidate.is_file():
        return _read_source(candidate, builtin=False)
    if candidate.suffix in (".yaml", ".yml") or "/" in name_or_path:
        raise ConfigError(f"preset file not found: {name_or_path}", "check the path, or use a built-in preset name")
    names = available_names()
    close = difflib.get_close_matches(name_or_path, names, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise ConfigError(
        f"unknown preset {name_or_path!r}",
        f"{hint}available: {', '.join(names)} (or a path to a YAML file; see `gspo presets list`)",
    )


# ---------------------------------------------------------------- inheritance and overrides


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def resolve_extends(source: PresetSource, chain: tuple[str, ...] = ()) -> tuple[dict[str, Any], Origins]:
    key = str(source.path.resolve())
    if key in chain:
        names = [Path(p).stem for p in (*chain, key)]
        raise ConfigError(
            f"{source.path}: circular `extends`: {' -> '.join(names)}",
            "remove `extends` from one of these presets",
        )
    data = dict(source.data)
    parent_name = data.pop("extends", None)
    if parent_name is None:
        return data, dict(source.origins)
    if not isinstance(parent_name, str):
        raise ConfigError(
            f"{source.origins.get(('extends',), source.path)}: extends must be a preset name or path",
            "for example `extends: qwen3-32b-4x16`",
        )
    if ("/" in parent_name or parent_name.startswith(("~", "."))) and not parent_name.endswith((".yaml", ".yml")):
        # A preset from someone else must not make gspo read (and echo) any file it names: /etc/shadow, ~/.netrc
        raise ConfigError(f"{source.origins.get(('extends',), source.path)}: extends names {parent_name!r}, which is "
                          "not a preset: name a preset or a .yaml file", "for example `extends: qwen3-32b-4x16`")
    parent_ref = parent_name
    relative = source.path.parent / parent_name
    if relative.is_file():
        parent_ref = str(relative)
    parent_source = find_source(parent_ref)
    parent_data, parent_origins = resolve_extends(parent_source, (*chain, key))
    # A child that extends another must name itself; it never inherits the parent's name and aliases.
    parent_data.pop("aliases", None)
    if "name" not in data:
        data["name"] = source.path.stem
    merged = _deep_merge(parent_data, data)
    origins = {**parent_origins, **source.origins}
    return merged, origins


def shown_set(item: str, marked: object = ()) -> str:
    """A --set as messages and saved files show it: a secret's value redacted (gspo_cli/private.py), and at most
    80 characters."""
    from gspo_cli.private import redact_set

    text = redact_set(item, marked)
    return text if len(text) <= 80 else text[:77] + "..."


def _parse_set(item: str) -> tuple[list[str], Any]:
    from gspo_cli.config import yaml_limits

    if "=" not in item:
        raise ConfigError(f"--set {shown_set(item)!r}: expected KEY=VALUE", "for example --set actor.lr=2e-6")
    key, raw = item.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {shown_set(item)!r}: empty key path", "for example --set rollout.n=8")
    try:
        value = yaml_limits.load(raw, f"--set {shown_set(item)}") if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.split("."), value


def _schema_fields_at(parts: list[str]) -> list[str] | None:
    """Field names valid at the mapping that `parts[:-1]` points to, or None if it is free-form."""
    from pydantic import BaseModel

    from gspo_cli.config.schema import Preset

    model: Any = Preset
    for part in parts[:-1]:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        info = model.model_fields.get(part)
        if info is None:
            return None
        model = _model_of(info.annotation)
        if model is None:
            return None
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return None


def _model_of(annotation: Any) -> Any:
    import typing

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def apply_sets(data: dict[str, Any], origins: Origins, sets: list[str]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for item in sets:
        parts, value = _parse_set(item)
        marked = (data.get("env") or {}).get("secrets") if isinstance(data.get("env"), dict) else ()
        shown = shown_set(item, marked if isinstance(marked, list) else ())
        fields = _schema_fields_at(parts)
        if fields is not None and parts[-1] not in fields:
            close = difflib.get_close_matches(parts[-1], fields, n=3, cutoff=0.5)
            where = ".".join(parts[:-1]) or "the top level"
            hint = f"did you mean {', '.join('.'.join([*parts[:-1], c]) for c in close)}?" if close else (
                f"keys at {where}: {', '.join(fields)}"
            )
            raise ConfigError(f"--set {shown!r}: unknown key '{'.'.join(parts)}'", hint)
        node = data
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ConfigError(
                    f"--set {shown!r}: '{'.'.join(parts[: i + 1])}' is a value, not a section", "set the value itself"
                )
            node = child
        node[parts[-1]] = value
        origins[tuple(parts)] = f"--set {shown}"
    return data


# ---------------------------------------------------------------- validation


def _origin_for(loc: tuple[Any, ...], origins: Origins) -> str | None:
    parts = tuple(str(p) for p in loc)
    while parts:
        if parts in origins:
            return origins[parts]
        parts = parts[:-1]
    return None


def validate(data: dict[str, Any], origins: Origins, file: str | None = None) -> Preset:
    from pydantic import ValidationError

    from gspo_cli.config import engine_support
    from gspo_cli.config.schema import Preset

    try:
        preset = Preset.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(*_describe_validation_error(exc, data, origins, file)) from None
    # the engine refuses keys it would ignore, naming where the preset set them
    engine_support.check(preset, lambda key: _origin_for(tuple(key.split(".")), origins) or file)
    return preset


def _describe_validation_error(exc: Any, data: dict[str, Any], origins: Origins, file: str | None) -> tuple[str, str]:
    messages = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        key = ".".join(key_text(p) for p in loc) or "(preset)"
        where = _origin_for(loc, origins) or file
        msg = err["msg"]
        if not (where or "").startswith("--set ") and (culprit := _set_named_in(msg, origins, tuple(map(str, loc)))):
            where = culprit  # a rule across keys broken by a --set: name the --set, not the preset file
        if err["type"] == "extra_forbidden":
            fields = _schema_fields_at([str(p) for p in loc]) or []
            close = difflib.get_close_matches(str(loc[-1]), fields, n=1, cutoff=0.5)
            msg = "unknown key" + (f" (did you mean '{'.'.join([*map(str, loc[:-1]), close[0]])}'?)" if close else "")
        elif err["type"] == "missing":
            msg = "required key is missing"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if err["type"] not in ("missing", "extra_forbidden") and "input" in err and not isinstance(
            err["input"], dict | list
        ) and tuple(map(str, loc[:2])) not in (("env", "vars"), ("hub", "endpoint")):  # may hold a secret: not echoed
            msg += f" (got {err['input']!r})"
        messages.append(f"{where + ': ' if where else ''}{key + ': ' if loc else ''}{msg}")
    head = messages[0]
    more = f" (and {len(messages) - 1} more: " + "; ".join(messages[1:4]) + ")" if len(messages) > 1 else ""
    if head.startswith("--set "):
        return head + more, "fix or drop that --set (see `gspo presets show NAME --resolved` for the values in use)"
    return head + more, "fix the preset (see `gspo presets show NAME` and docs/presets.md)"


def _set_named_in(msg: str, origins: Origins, loc: tuple[str, ...] = ()) -> str | None:
    """The --set behind an error of a whole section (or of the preset: "rollout.n must be >= 2 ..."): one under
    that section whose key the message names, in full or relative to the section."""
    for key, origin in origins.items():
        if not origin.startswith("--set ") or key[:len(loc)] != loc:
            continue
        for name in {".".join(key), ".".join(key[len(loc):])}:
            if name and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", msg):
                return origin
    return None


@dataclass
class LoadedPreset:
    preset: Preset
    source: PresetSource
    origins: Origins
    notes: list[str] = field(default_factory=list)  # what was not taken from a run folder's saved config

    def origin(self, key: tuple[str, ...]) -> str | None:
        """Where `key` (or the nearest section above it) was set: a file and line, or the `--set`."""
        return _origin_for(key, self.origins)


_NOTED: set[str] = set()  # notes printed in this process (a command loads one preset more than once)


def load(name_or_path: str, sets: list[str] | None = None) -> LoadedPreset:
    """Find a preset, apply `extends` and `--set` overrides, and validate it against the schema. A run folder's
    saved config is data (config/run_config.py): what would run code is dropped or refused before the `--set`s."""
    from gspo_cli.config import run_config, trust

    source = find_source(name_or_path)
    data, origins = resolve_extends(source)
    notes: list[str] = []
    if run_config.is_run_config(source.path):
        data, notes = run_config.as_data(data, str(source.path))
        _print_notes(notes)
    if sets:
        data = apply_sets(data, origins, sets)
    loaded = LoadedPreset(preset=validate(data, origins, str(source.path)), source=source, origins=origins, notes=notes)
    if run_config.is_run_config(source.path) and loaded.preset.model.trust_remote_code:  # only a --set says so here
        notes.append(trust.line(trust.source(loaded) or "--set"))
        _print_notes(notes[-1:])
    return loaded


def _print_notes(notes: list[str]) -> None:
    from gspo_cli.console import err
    from gspo_cli.untrusted import clean

    for text in notes:
        if text not in _NOTED:
            _NOTED.add(text)
            err.print(f"note: {clean(text)}", highlight=False, markup=False)


def load_preset(name_or_path: str, sets: list[str] | None = None) -> Preset:
    """The validated `Preset` for a name, alias or path, with `--set` overrides applied."""
    return load(name_or_path, sets).preset


def origin_of(loaded: LoadedPreset, key_path: str) -> str | None:
    return _origin_for(tuple(key_path.split(".")), loaded.origins)

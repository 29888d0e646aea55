"""What each training engine supports, checked when a preset is loaded for its `trainer.engine`: the checks over
each engine's `support` entry (the data: config/engine_registry.py).

A key an engine ignores is refused when the preset sets it, i.e. when its value differs from the schema default
(a key left at its default changes nothing, so copying a verl preset and switching the engine does not trip on
keys it never touched). Keys with a fixed set of values per engine (`actor.strategy`, `rollout.name`) take the
engine's first value when the preset leaves them out, so `gspo presets show --resolved` shows what runs.
"""

from __future__ import annotations

from typing import Any

from gspo_cli.config.engine_registry import ENGINES, EngineSupport
from gspo_cli.errors import ConfigError


def of(engine: Any) -> EngineSupport | None:
    """What engine `engine` supports (None for an unknown or missing name, or a raw preset's non-string value: the
    schema reports it)."""
    entry = ENGINES.get(engine) if isinstance(engine, str) else None
    return entry.support if entry is not None else None


def needs(preset: Any, package: str) -> bool:
    """Whether the preset's engine needs Python package `package` (an import name)."""
    support = of(getattr(getattr(preset, "trainer", None), "engine", None))
    return support is not None and package in support.packages


def fill_engine_values(data: Any, default_engine: str) -> Any:
    """Raw preset mapping: `actor.strategy` and `rollout.name` default to the engine's own when not given
    (`default_engine`: the schema's `trainer.engine` default, for a preset that names none)."""
    if not isinstance(data, dict):
        return data
    trainer = data.get("trainer")
    engine = trainer.get("engine", default_engine) if isinstance(trainer, dict) else default_engine
    support = of(engine)
    if support is None:
        return data  # the schema reports the unknown engine
    out = dict(data)
    for key, allowed in support.allowed().items():
        section, name = key.split(".")
        part = out.get(section, {})
        if isinstance(part, dict) and name not in part:
            out[section] = {**part, name: allowed[0]}
    return out


def _value(preset: Any, key: str) -> Any:
    for part in key.split("."):
        preset = getattr(preset, part)
    return preset


def _show(value: Any) -> str:
    """A value as the preset would spell it (true, 4, [console, wandb])."""
    import json

    return json.dumps(value, default=str).replace('"', "")


def _default(preset: Any, key: str) -> Any:
    """The schema's default of `key`, read from the preset's own model class (this module sits below schema.py)."""
    model: Any = type(preset)
    *sections, name = key.split(".")
    for section in sections:
        model = model.model_fields[section].annotation
    return model.model_fields[name].get_default(call_default_factory=True)


def problems(preset: Any) -> list[tuple[str, str, str]]:
    """(key, message, hint) for every key the preset's engine does not support."""
    engine = preset.trainer.engine
    support = ENGINES[engine].support
    found = []
    for key, allowed in support.allowed().items():
        value = _value(preset, key)
        if value not in allowed:
            found.append((key, f"{key}: {_show(value)} is not supported by the {engine} engine",
                          f"use {' or '.join(map(str, allowed))} with trainer.engine: {engine}"))
    for key, why in support.ignored.items():
        value = _value(preset, key)
        if value != _default(preset, key):
            found.append((key, f"{key}: {_show(value)} is set but the {engine} engine ignores it", why))
    for key, items in support.items.items():
        for item in _value(preset, key):
            if item not in items:
                found.append((key, f"{key}: {item} is not supported by the {engine} engine",
                               f"the {engine} engine writes {', '.join(items)} (docs/trackers.md)"))
    return found


def check(preset: Any, where: Any = None) -> None:
    """ConfigError naming the first unsupported key (and how many more); `where(key)` gives its file:line."""
    found = problems(preset)
    if not found:
        return
    key, message, hint = found[0]
    origin = where(key) if where is not None else None
    more = f" (and {len(found) - 1} more: {', '.join(k for k, _, _ in found[1:4])})" if len(found) > 1 else ""
    remove = f"; or remove {key}" if key not in ENGINES[preset.trainer.engine].support.values else ""
    raise ConfigError(f"{origin + ': ' if origin else ''}{message}{more}", f"{hint}{remove}")


def retarget(raw: dict[str, Any], preset: Any, engine: str) -> tuple[dict[str, Any], list[str]]:
    """The raw preset mapping `raw` (whose loaded form is `preset`) set to run on `engine`: the engine switched, the
    keys with per-engine values (actor.strategy, rollout.name) set to `engine`'s default, and the keys `engine`
    ignores removed (they fall back to the schema default). Returns the new mapping and one line per change, so
    the same task runs on the other engine with nothing else touched (the native engine is the reference)."""
    support = ENGINES[engine].support
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in raw.items()}
    out["trainer"] = {**out.get("trainer", {}), "engine": engine}
    changes = [f"trainer.engine {preset.trainer.engine} -> {engine}"]
    for key, allowed in support.allowed().items():
        section, name = key.split(".")
        if _value(preset, key) not in allowed:
            out[section] = {**out.get(section, {}), name: allowed[0]}
            changes.append(f"{key} {_show(_value(preset, key))} -> {_show(allowed[0])}")
    for key in support.ignored:
        if _value(preset, key) != _default(preset, key):
            section, name = key.split(".")
            out.get(section, {}).pop(name, None)
            changes.append(f"{key} {_show(_value(preset, key))} dropped ({engine} default)")
    return out, changes

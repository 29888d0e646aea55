"""Flatten resolved presets to `a.b.c -> value` and name the keys where they differ (runs show, report legends)."""

from __future__ import annotations

from typing import Any

# Keys that differ between runs without being a setting of the experiment.
NOT_SETTINGS = ("name", "description", "aliases", "paths.", "trainer.experiment_name", "trainer.project_name")


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings -> {dotted.key: leaf}; lists stay whole (a list is one setting)."""
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(flatten(value, path))
        else:
            out[path] = value
    return out


def is_setting(key: str) -> bool:
    return not any(key == k or (k.endswith(".") and key.startswith(k)) for k in NOT_SETTINGS)


def diff(base: dict[str, Any], other: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(key, base value, other value) for every flattened key whose value differs, sorted by key."""
    a, b = flatten(base), flatten(other)
    missing = object()
    rows = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, missing), b.get(key, missing)
        if va != vb:
            rows.append((key, None if va is missing else va, None if vb is missing else vb))
    return rows


def differing_keys(configs: list[dict[str, Any]]) -> list[str]:
    """Experiment settings (see NOT_SETTINGS) whose values are not the same in every config."""
    flat = [flatten(c) for c in configs]
    keys = sorted(set().union(*flat)) if flat else []
    return [k for k in keys if is_setting(k) and len({repr(f.get(k)) for f in flat}) > 1]

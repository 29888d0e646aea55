"""Service functions behind `gspo presets`: the catalog table and forking a preset into a user file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gspo_cli import layout
from gspo_cli.config import presets
from gspo_cli.config.schema import ClusterSection, TrainerSection
from gspo_cli.errors import ConfigError
from gspo_cli.fsutil import atomic_write_text


def catalog() -> list[dict[str, Any]]:
    """One row per preset (built-in first, then $GSPO_HOME/presets), resolved through `extends`."""
    sources = presets.builtin_sources() + presets.user_sources()
    rows = []
    for source in sources:
        data, _ = presets.resolve_extends(source)
        cluster = data.get("cluster") or {}
        rows.append(
            {
                "name": source.name,
                "aliases": [str(a) for a in data.get("aliases") or []] if source.builtin else [],
                "model": str((data.get("model") or {}).get("path", "?")),
                "cluster": f"{_given_or_default(cluster, ClusterSection, 'nnodes')}x"
                f"{_given_or_default(cluster, ClusterSection, 'devices_per_node')} "
                f"{_given_or_default(cluster, ClusterSection, 'device')}",
                "engine": str(_given_or_default(data.get("trainer") or {}, TrainerSection, "engine")),
                "description": str(data.get("description", "")),
                "builtin": source.builtin,
                "path": str(source.path),
            }
        )
    return rows


def _given_or_default(section: dict[str, Any], schema: type[BaseModel], key: str) -> Any:
    """The file's value, else the schema's default (the catalog lists presets without validating them)."""
    return section.get(key, schema.model_fields[key].get_default(call_default_factory=True))


def copy_preset(name: str, dest: Path, *, force: bool = False) -> Path:
    source = presets.find_source(name)
    if dest.suffix not in (".yaml", ".yml") and "/" not in str(dest):
        dest = layout.user_presets_dir() / f"{dest}.yaml"
    dest = dest.expanduser()
    if dest.exists() and not force:
        raise ConfigError(f"{dest} already exists", "choose another name, or pass --force to overwrite it")
    text = source.path.read_text(encoding="utf-8")
    new_name = dest.stem
    # The fork gets its own name and no aliases, so it never shadows the built-in it came from.
    text = re.sub(r"^name:.*$", f"name: {new_name}", text, count=1, flags=re.M)
    text = re.sub(r"^aliases:.*\n", "", text, count=1, flags=re.M)
    header = f"# Forked from {source.name} ({source.path.name}). Edit freely; validate with `gspo presets show {new_name if dest.parent == layout.user_presets_dir() else dest}`.\n"
    atomic_write_text(dest, header + text)
    return dest

"""`manifest.json`: what a prepared dataset was made from, with which settings, and the hashes that prove it.

`<data_dir>/<source>/manifest.json` records the input (path, size, sha256, hub repo/revision), the settings
(prompt style, dedup, conflict policy, language, arith parameters), the counts (rows in/out, duplicates,
conflicts, rejected rows by reason) and each output split (rows, sha256). `check_prepared(preset)` is the
preflight of `gspo train`: it refuses a missing or stale dataset with the command that fixes it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from gspo_cli import layout
from gspo_cli.errors import DataError
from gspo_cli.shell import quote

FORMAT = 1  # bump when the output rows change for the same input and settings: forces a re-prepare


def sha256_file(path: str | Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def settings_for(source: str, data) -> dict[str, Any]:
    """The preset data settings that shape a source's output (compared by `check_prepared` and no-op reruns)."""
    settings: dict[str, Any] = {"prompt_style": data.prompt_style}
    if source == "arith":
        settings["arith"] = data.arith.model_dump(mode="json")
    else:
        # AIME is always deduplicated (see sources.Aime2024), so `dedup` does not shape its output.
        if source != "aime-2024":
            settings["dedup"] = data.dedup
        settings["conflict_policy"] = data.conflict_policy
        settings["language"] = data.language
    return settings


def read(source: str, preset=None, *, data_dir: Path | None = None) -> dict[str, Any] | None:
    path = (data_dir / source / "manifest.json") if data_dir else layout.manifest_path(source, preset)
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def val_rows(preset) -> int | None:
    """Rows of the prepared validation split the preset validates on, or None when it is not prepared."""
    manifest = read(preset.data.val.source, preset)
    try:
        rows = (manifest or {})["outputs"]["val"]["rows"]
    except (KeyError, TypeError):
        return None
    return rows if isinstance(rows, int) else None


def _roles(preset) -> dict[str, tuple[Any, list[str]]]:
    """source -> (spec, splits) the preset's training reads."""
    out: dict[str, tuple[Any, list[str]]] = {}
    for split in ("train", "val"):
        spec = getattr(preset.data, split)
        prev = out.get(spec.source)
        out[spec.source] = (prev[0] if prev else spec, [*(prev[1] if prev else []), split])
    return out


def check_prepared(preset) -> None:
    """Raise DataError unless every dataset the preset trains/validates on is prepared with its settings."""
    name = preset.name
    fix = f"run: gspo prepare-data --preset {quote(name)}"
    for source, (spec, splits) in _roles(preset).items():
        mpath = layout.manifest_path(source, preset)
        manifest = read(source, preset)
        if manifest is None:
            raise DataError(
                f"dataset {source} is not prepared: {mpath} is missing or unreadable", fix
            )
        want = settings_for(source, preset.data)
        have = manifest.get("settings", {})
        for key, value in want.items():
            if have.get(key) != value:
                raise DataError(
                    f"prepared {source} does not match preset {name}: {key} is {have.get(key)!r} in {mpath}, "
                    f"{value!r} in the preset",
                    fix,
                )
        if manifest.get("format") != FORMAT:
            raise DataError(f"prepared {source} was written by an older gspo (format {manifest.get('format')})", fix)
        inp = manifest.get("input") or {}
        if source != "arith":
            if spec.input:
                if Path(inp.get("path", "")) != Path(spec.input).expanduser().resolve():
                    raise DataError(
                        f"prepared {source} was made from {inp.get('path')}, the preset names {spec.input}", fix
                    )
            elif spec.hub_repo and inp.get("hub_repo") and inp.get("hub_repo") != spec.hub_repo:
                raise DataError(
                    f"prepared {source} came from {inp.get('hub_repo')}, the preset names {spec.hub_repo}", fix
                )
            if spec.revision and inp.get("hub_repo") and inp.get("revision") != spec.revision:
                raise DataError(
                    f"prepared {source} is revision {inp.get('revision')!r}, the preset pins {spec.revision!r}", fix
                )
        outputs = manifest.get("outputs", {})
        for split in splits:
            out = outputs.get(split)
            path = layout.split_path(source, split, preset)
            if out is None:
                raise DataError(f"prepared {source} has no {split} split ({mpath} lists {', '.join(outputs)})", fix)
            if not path.exists():
                raise DataError(f"prepared {source}: {path} is missing", fix)
            if sha256_file(path) != out.get("sha256"):
                raise DataError(f"prepared {source}: {path} does not match its manifest (sha256 differs)", fix)

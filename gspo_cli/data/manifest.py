"""`manifest.json`: what a prepared dataset was made from, with which settings, and the hashes that prove it.

`<data_dir>/<source>/<key>/manifest.json` records the input (path, size, sha256, hub repo/revision), the settings
(prompt style, dedup, conflict policy, language, arith parameters), the counts (rows in/out, duplicates,
conflicts, rejected rows by reason) and each output split (rows, sha256). `check_prepared(preset)` is the
preflight of `gspo train`: it refuses a missing or stale dataset with the command that fixes it.

Keyed sets: a preset's prepared set of a source lives in `<data_dir>/<source>/<key>/`, the key (`data_key`) being
a digest of what shapes the output (`settings_for`: prompt style, arith sizes and seed, dedup, ...; and for a
downloaded source the input the preset names). Two presets that generate different data (tiny: val 200; tiny-verl:
val 32) get two folders and never write over each other; presets with the same data settings share one. A home
prepared before keys (`<data_dir>/<source>/{train,val}.parquet`) keeps working: that folder is read when its
manifest matches the preset's settings (`legacy` in `prepared_dir`'s answer), never when it does not.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from gspo_cli import layout
from gspo_cli.config import hub as hubs
from gspo_cli.errors import DataError
from gspo_cli.shell import command

_KEY = re.compile(r"^[0-9a-f]{8}$")  # a keyed set's folder name
FORMAT = 1  # bump when the output rows change for the same input and settings: forces a re-prepare


def sha256_file(path: str | Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def settings_for(source: str, data) -> dict[str, Any]:
    """The preset data settings that shape a source's output (compared by `check_prepared` and no-op reruns)."""
    from gspo_cli.data.source_base import shaping_settings
    from gspo_cli.data.sources import SOURCES

    known = SOURCES.get(source)  # the source's own fact (Source.settings); an unknown name: a file source's
    return known.settings(data) if known is not None else shaping_settings(data, dedup=True)


def spec_of(source: str, preset):
    """The preset's dataset spec that names `source` (train first, as prepare-data's plan), else None (a source
    only an eval benchmark reads)."""
    for split in ("train", "val"):
        spec = getattr(preset.data, split)
        if spec.source == source:
            return spec
    return None


def data_key(source: str, preset) -> str:
    """8 hex characters naming what shapes `source`'s prepared set under this preset: `settings_for`, and for a
    source read from an input file the input the preset names (file, hub repo and file, pinned revision)."""
    ident: dict[str, Any] = {"source": source, "settings": settings_for(source, preset.data)}
    spec = spec_of(source, preset)
    if source != "arith" and spec is not None:
        ident["input"] = {
            "path": str(Path(spec.input).expanduser().resolve()) if spec.input else None,
            "hub_repo": spec.hub_repo, "hub_filename": spec.hub_filename, "revision": spec.revision,
        }
        hub = hubs.of(preset)
        if not spec.input and hub.name != hubs.HUGGINGFACE:  # the same repo id on two hubs is not the same bytes
            ident["input"]["hub"] = hub.name
    blob = json.dumps(ident, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:8]


def load(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _settings_match(manifest: dict[str, Any], source: str, preset) -> bool:
    have = manifest.get("settings") or {}
    return manifest.get("format") == FORMAT and all(
        have.get(key) == value for key, value in settings_for(source, preset.data).items())


def legacy_dir(source: str, preset=None, *, data_dir: Path | None = None) -> Path:
    """Where gspo before keyed sets wrote `source` (`<data_dir>/<source>/`)."""
    return (data_dir / source) if data_dir is not None else layout.source_root(source, preset)


def prepared_dir(source: str, preset, *, data_dir: Path | None = None) -> Path:
    """The folder of `source`'s prepared set for `preset`: its keyed folder, or the pre-key folder
    `<data_dir>/<source>/` when only that holds a set, with a manifest of the preset's settings (`is_legacy`)."""
    root = data_dir if data_dir is not None else layout.data_dir(preset)
    keyed = root / source / data_key(source, preset)
    if (keyed / "manifest.json").is_file():
        return keyed
    old = legacy_dir(source, data_dir=root)
    if (old / "manifest.json").exists():
        manifest = load(old / "manifest.json")
        return old if manifest is not None and _settings_match(manifest, source, preset) else keyed
    if any((old / f"{split}.parquet").is_file() for split in ("train", "val")):
        return old  # parquet put there by hand, no manifest: trusted as given (as before keyed folders)
    return keyed


def is_legacy(folder: Path) -> bool:
    """Whether `folder` is a pre-key set (`<data_dir>/<source>/` itself, not `<source>/<key>/`)."""
    manifest = load(folder / "manifest.json")
    return manifest is not None and "key" not in manifest and manifest.get("source") == folder.name


def split_path(source: str, split: str, preset) -> Path:
    return prepared_dir(source, preset) / f"{split}.parquet"


def manifest_path(source: str, preset) -> Path:
    return prepared_dir(source, preset) / "manifest.json"


def train_file(preset) -> Path:
    return split_path(preset.data.train.source, "train", preset)


def val_file(preset) -> Path:
    return split_path(preset.data.val.source, "val", preset)


def sets_of(source: str, data_dir: Path) -> list[Path]:
    """Every prepared set of `source` under `data_dir` (keyed folders and a pre-key one), for a reader with no
    preset to pick the key (`gspo eval --data`-less without a preset)."""
    root = data_dir / source
    found = [root] if any((root / name).is_file() for name in ("manifest.json", "train.parquet", "val.parquet")) \
        else []
    if root.is_dir():
        found += sorted(p for p in root.iterdir() if _KEY.match(p.name) and (p / "manifest.json").is_file())
    return found


def read(source: str, preset=None, *, data_dir: Path | None = None) -> dict[str, Any] | None:
    return load(prepared_dir(source, preset, data_dir=data_dir) / "manifest.json")


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


def check_prepared(preset, *, preset_ref: str | None = None, sets: list[str] | tuple[str, ...] = ()) -> None:
    """Raise DataError unless every dataset the preset trains/validates on is prepared with its settings.
    `preset_ref` / `sets`: how the user named the preset and its `--set` overrides, so the fix prepares the same
    data (the `data.*` overrides travel; without them `prepare-data` would make the preset's default set)."""
    name = preset.name
    data_sets = [s for s in sets if s.split("=", 1)[0].strip().startswith("data.")]
    fix = "run: " + command("gspo", "prepare-data", "--preset", preset_ref or name,
                            *(a for s in data_sets for a in ("--set", s)))
    for source, (spec, splits) in _roles(preset).items():
        folder = prepared_dir(source, preset)
        mpath = folder / "manifest.json"
        manifest = load(mpath)
        if manifest is None:
            raise DataError(f"dataset {source} is not prepared for preset {name}{_others(source, preset)}", fix)
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
            path = folder / f"{split}.parquet"
            if out is None:
                raise DataError(f"prepared {source} has no {split} split ({mpath} lists {', '.join(outputs)})", fix)
            if not path.exists():
                raise DataError(f"prepared {source}: {path} is missing", fix)
            if sha256_file(path) != out.get("sha256"):
                raise DataError(f"prepared {source}: {path} does not match its manifest (sha256 differs)", fix)


def _others(source: str, preset) -> str:
    """Why no set of `source` here is this preset's: the settings in which the newest other set differs, or where
    none is (a first prepare)."""
    root = layout.data_dir(preset)
    others = [p for p in sets_of(source, root) if load(p / "manifest.json") is not None]
    if not others:
        return f" (nothing prepared under {root / source})"
    newest = max(others, key=lambda p: (p / "manifest.json").stat().st_mtime)
    differs = _differences(load(newest / "manifest.json") or {}, source, preset)
    if newest == root / source:
        return f": {root / source} holds a set prepared before keyed folders, with other settings ({differs})"
    return f": {root / source} holds {len(others)} set(s) with other settings (the newest, {newest.name}: {differs})"


def _differences(manifest: dict[str, Any], source: str, preset) -> str:
    """`key: have there, want here` for each setting that differs (the reason a set is not this preset's)."""
    have = manifest.get("settings") or {}
    parts = []
    for key, value in settings_for(source, preset.data).items():
        there = have.get(key)
        if there == value:
            continue
        if isinstance(there, dict) and isinstance(value, dict):  # a section (e.g. arith): the fields that differ
            parts += [f"{sub} {there.get(sub)!r} there, {value.get(sub)!r} here"
                      for sub in sorted({*there, *value}) if there.get(sub) != value.get(sub)]
        else:
            parts.append(f"{key} {there!r} there, {value!r} here")
    if manifest.get("format") != FORMAT:
        parts.append(f"format {manifest.get('format')!r} there, {FORMAT} here")
    return "; ".join(parts) or "none"

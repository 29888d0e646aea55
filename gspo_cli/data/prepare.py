"""`prepare-data` as a service: plan which sources to build from the preset, build each, write atomically.

For each source: find the raw input (`fetch`), compare with the existing manifest (an unchanged input with
unchanged settings is a no-op), build the tables (`sources`), then write every split to a temp file and rename,
and the manifest last. Any error before the renames leaves the previous output untouched.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gspo_cli import __version__, layout
from gspo_cli.config import hub as hubs
from gspo_cli.config.benchmarks import BUILTIN_BENCHMARKS
from gspo_cli.data import fetch, sources
from gspo_cli.data import manifest as mf
from gspo_cli.errors import ConfigError, DataError
from gspo_cli.fsutil import atomic_write_json

Progress = Callable[[str, int, int | None], None]


@dataclass
class Item:
    source: str
    splits: tuple[str, ...]
    spec: Any  # schema.DatasetSpec or None (a source the preset does not name)


def parse_inputs(items: list[str]) -> dict[str, str]:
    """`NAME=PATH` pairs from `--input` into {source: path}."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--input {item!r} is not NAME=PATH", "e.g. --input dapo-math-17k=/data/dapo.parquet")
        sources.get(name)
        out[name] = path
    return out


def plan(preset, datasets: list[str] | None = None) -> list[Item]:
    """The sources to build: the preset's train/val sources and its eval benchmarks' sources (or only the
    `--dataset` names), each with the splits it writes."""
    by_source: dict[str, Item] = {}
    for split in ("train", "val"):
        spec = getattr(preset.data, split)
        item = by_source.get(spec.source)
        if item is None:
            by_source[spec.source] = Item(spec.source, (split,), spec)
        elif split not in item.splits:
            item.splits = (*item.splits, split)
    # `gspo eval BENCH` reads the val split of the benchmark's source, unless the benchmark names its own file.
    for bench in preset.eval.prepare:
        spec = BUILTIN_BENCHMARKS.get(bench)
        source = spec.source if spec is not None else None
        if source and not preset.eval.benchmarks[bench].data and source not in by_source:
            by_source[source] = Item(source, sources.get(source).default_splits, None)
    for name in datasets or []:
        if name not in by_source:
            by_source[name] = Item(name, sources.get(name).default_splits, None)
    names = list(dict.fromkeys(datasets)) if datasets else list(by_source)
    items = [by_source[n] for n in names]
    for item in items:
        if not sources.get(item.source).needs_input:  # synthetic sources always write all their splits
            item.splits = sources.get(item.source).default_splits
    return items


def check_inputs(items: list[Item], inputs: dict[str, str]) -> None:
    """Every `--input NAME=PATH` must name a source this run prepares."""
    unknown = set(inputs) - {i.source for i in items}
    if unknown:
        raise ConfigError(
            f"--input names {', '.join(sorted(unknown))}, which this run does not prepare",
            f"this run prepares: {', '.join(i.source for i in items)} (add --dataset NAME to include another)",
        )


def _input_identity(path: Path, previous: dict[str, Any] | None) -> dict[str, Any]:
    """Path, size, mtime and sha256 of the input; the sha is reused from the manifest when size+mtime match."""
    st = path.stat()
    ident = {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    prev = (previous or {}).get("input") or {}
    if prev.get("path") == ident["path"] and prev.get("size") == st.st_size and prev.get("mtime_ns") == st.st_mtime_ns:
        ident["sha256"] = prev.get("sha256")
    else:
        ident["sha256"] = mf.sha256_file(path)
    return ident


def _fingerprint(source: str, splits, settings: dict[str, Any], input_sha: str | None, revision) -> str:
    blob = json.dumps(
        {"format": mf.FORMAT, "source": source, "splits": sorted(splits), "settings": settings,
         "input_sha256": input_sha, "revision": revision},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _outputs_intact(source_dir: Path, manifest: dict[str, Any], splits) -> bool:
    outputs = manifest.get("outputs", {})
    for split in splits:
        out = outputs.get(split)
        path = source_dir / f"{split}.parquet"
        if out is None or not path.exists() or mf.sha256_file(path) != out.get("sha256"):
            return False
    return True


def _split_of(source: str, preset) -> str:
    return "train" if preset.data.train.source == source else "val"


def _locate_input(item: Item, preset, source_dir: Path, input_path: str | None, previous) -> tuple[dict | None, Any]:
    """The raw input's identity (path, size, sha256, origin) and the hub revision it came from; (None, revision)
    for a synthetic source."""
    src = sources.get(item.source)
    spec = item.spec
    revision = pinned_revision(src, spec)
    if not src.needs_input:
        return None, revision
    path, where = fetch.resolve_input(
        item.source,
        local=input_path or getattr(spec, "input", None),
        hub_repo=getattr(spec, "hub_repo", None) or src.hub_repo,
        hub_filename=getattr(spec, "hub_filename", None) or src.hub_filename,
        revision=revision,
        source_dir=source_dir,
        option=f"--input {item.source}",
        hub=hubs.of(preset),
        revision_key=(f"data.{_split_of(item.source, preset)}.revision" if spec is not None
                      else f"revision (a source the preset does not name: --input {item.source}=PATH)"),
    )
    if where.get("origin") == "local":
        revision = None  # a local file has no hub revision
    return {**_input_identity(path, previous), **where}, revision


def pinned_revision(src, spec) -> str | None:
    """The hub revision to read: the preset's, else the source's own pin when the preset names no other repo."""
    if getattr(spec, "revision", None):
        return spec.revision
    if getattr(spec, "input", None) or getattr(spec, "hub_repo", None) not in (None, src.hub_repo):
        return None  # a local file, or another repo: the source's pin is for its own repo
    return src.hub_revision


def _build(item: Item, preset, input_info: dict | None, progress: Progress | None):
    """The source's tables (one per split) and its stats, read from the raw input or generated."""
    raw = None
    if input_info is not None:
        from gspo_cli.data.readers import RawFile

        raw = RawFile(input_info["path"], item.source)
    opts = sources.BuildOptions(
        splits=item.splits,
        prompt_style=preset.data.prompt_style,
        dedup=preset.data.dedup,
        conflict_policy=preset.data.conflict_policy,
        language=preset.data.language,
        arith=preset.data.arith,
        progress=(lambda done, total: progress(item.source, done, total)) if progress else None,
    )
    return sources.get(item.source).build(raw, opts)


def _write_splits(source_dir: Path, tables: dict[str, Any]) -> dict[str, Any]:
    """Every split to a temp file first; only when all are written, drop the old manifest and rename the splits
    into place (the caller writes the new manifest last). A failure before that leaves the old output as it was."""
    from gspo_cli.data.rows import write_parquet

    source_dir.mkdir(parents=True, exist_ok=True)
    outputs: dict[str, Any] = {}
    staged: list[tuple[Path, Path]] = []
    try:
        for split, table in tables.items():
            dest = source_dir / f"{split}.parquet"
            tmp = source_dir / f".{split}.parquet.{os.getpid()}.tmp"
            write_parquet(table, tmp)
            staged.append((tmp, dest))
            outputs[split] = {
                "path": dest.name, "rows": table.num_rows, "sha256": mf.sha256_file(tmp), "bytes": tmp.stat().st_size,
            }
        (source_dir / "manifest.json").unlink(missing_ok=True)
        for tmp, dest in staged:
            os.replace(tmp, dest)
        staged.clear()
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
    return outputs


def prepare_one(
    item: Item,
    preset,
    *,
    data_dir: Path,
    input_path: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Build one source into `<data_dir>/<source>/<key>/` (the key names the preset's data settings, so another
    preset's set is never written over); returns its manifest plus `status` (written | unchanged).

    An unchanged input with unchanged settings and intact outputs is a no-op (`--force` rebuilds)."""
    source_dir = data_dir / item.source / mf.data_key(item.source, preset)
    settings = mf.settings_for(item.source, preset.data)
    previous = mf.load(source_dir / "manifest.json")
    t0 = time.perf_counter()
    # downloads are cached per source (`<source>/raw/`), shared by every keyed set
    input_info, revision = _locate_input(item, preset, data_dir / item.source, input_path, previous)
    fingerprint = _fingerprint(item.source, item.splits, settings, input_info and input_info["sha256"], revision)
    if (
        not force
        and previous is not None
        and previous.get("fingerprint") == fingerprint
        and _outputs_intact(source_dir, previous, item.splits)
    ):
        return {**previous, "status": "unchanged", "seconds": round(time.perf_counter() - t0, 3)}

    built = _build(item, preset, input_info, progress)
    outputs = _write_splits(source_dir, built.tables)
    manifest = {
        "source": item.source,
        "key": source_dir.name,
        "format": mf.FORMAT,
        "gspo_version": __version__,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "input": None if input_info is None else {**input_info, "revision": revision},
        "settings": settings,
        "prompt_style": preset.data.prompt_style,
        "splits": list(outputs),
        **built.stats,
        "outputs": outputs,
        "output_sha256": {split: out["sha256"] for split, out in outputs.items()},
        "fingerprint": fingerprint,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    atomic_write_json(source_dir / "manifest.json", manifest)
    return {**manifest, "status": "written"}


def prepare(
    preset,
    *,
    datasets: list[str] | None = None,
    inputs: dict[str, str] | None = None,
    out_dir: str | Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Prepare every planned source; returns one report (manifest + status) per source."""
    data_dir = Path(out_dir).expanduser() if out_dir else layout.data_dir(preset)
    items = plan(preset, datasets)
    check_inputs(items, inputs or {})
    reports = []
    for item in items:
        reports.append(
            prepare_one(item, preset, data_dir=data_dir, input_path=(inputs or {}).get(item.source), force=force,
                        progress=progress)
        )
    return reports


def summary_line(report: dict[str, Any]) -> str:
    """One human line per source for logs and the job's messages."""
    name = report["source"]
    if report["status"] == "unchanged":
        return f"{name}: unchanged (same input and settings as {report.get('created_at')}); nothing to do"
    outs = ", ".join(f"{s} {o['rows']} rows" for s, o in report["outputs"].items())
    parts = [f"{name}: wrote {outs}"]
    if report.get("rows_in"):
        parts.append(f"from {report['rows_in']} rows in")
        parts.append(f"{report.get('duplicates_removed', 0)} duplicates removed")
        conf = report.get("conflicts") or {}
        if conf.get("problems"):
            parts.append(f"{conf['problems']} conflicting problems ({conf['policy']})")
        lang = report.get("language_filter")
        if lang:
            parts.append(f"{lang['problems']} non-{lang['filter']} problems dropped")
        rej = (report.get("rejected") or {}).get("rows", 0)
        if rej:
            parts.append(f"{rej} rows rejected")
    parts.append(f"{report.get('seconds', 0):.1f}s")
    return "; ".join(parts)


__all__ = ["DataError", "Item", "parse_inputs", "plan", "prepare", "prepare_one", "summary_line"]

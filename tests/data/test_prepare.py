"""The prepare service: manifest contents, no-op reruns, hub fallback, and the train-time check."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from raw_factories import dapo_fixture_rows, dapo_row, write_aime_h4, write_dapo

from gspo_cli.data import manifest, prepare
from gspo_cli.errors import DataError

MANIFEST_FIELDS = {
    "source", "format", "gspo_version", "created_at", "input", "settings", "prompt_style", "splits", "rows_in",
    "rows_out", "unique_problems", "duplicates_removed", "conflicts", "language_filter", "rejected", "outputs",
    "output_sha256", "fingerprint", "seconds",
}


def _prep(preset, path, name="dapo-math-17k", **kw):
    (report,) = prepare.prepare(preset, datasets=[name], inputs={name: str(path)}, **kw)
    return report


def test_manifest_has_every_field(qwen_preset, dapo_file):
    preset = qwen_preset()
    _prep(preset, dapo_file)
    m = json.loads((Path(preset.paths.data_dir) / "dapo-math-17k" / "manifest.json").read_text())
    assert MANIFEST_FIELDS <= set(m)
    assert m["input"]["path"] == str(dapo_file.resolve())
    assert m["input"]["size"] == dapo_file.stat().st_size
    assert m["input"]["sha256"] == manifest.sha256_file(dapo_file)
    assert m["input"]["origin"] == "local" and m["input"]["revision"] is None
    assert m["settings"] == {"prompt_style": "dapo", "dedup": True, "conflict_policy": "drop", "language": None}
    out = Path(preset.paths.data_dir) / "dapo-math-17k" / "train.parquet"
    assert m["outputs"]["train"]["sha256"] == manifest.sha256_file(out) == m["output_sha256"]["train"]
    assert m["rows_in"] == 65 and m["rows_out"] == 11
@pytest.mark.slow


def test_rerun_is_a_noop_until_input_or_settings_change(qwen_preset, dapo_file):
    preset = qwen_preset()
    first = _prep(preset, dapo_file)
    out = Path(preset.paths.data_dir) / "dapo-math-17k" / "train.parquet"
    mtime = out.stat().st_mtime_ns

    again = _prep(preset, dapo_file)
    assert again["status"] == "unchanged" and "nothing to do" in prepare.summary_line(again)
    assert out.stat().st_mtime_ns == mtime

    os.utime(dapo_file, ns=(1, 1))  # touched, same bytes: sha256 says unchanged
    assert _prep(preset, dapo_file)["status"] == "unchanged"

    assert _prep(qwen_preset("data.language=en"), dapo_file)["status"] == "written"  # settings changed
    assert _prep(qwen_preset("data.language=en"), dapo_file)["status"] == "unchanged"
    assert _prep(qwen_preset("data.language=en"), dapo_file, force=True)["status"] == "written"

    write_dapo(dapo_file, [*dapo_fixture_rows(), dapo_row("A new problem.", "1", "n1")])
    report = _prep(qwen_preset("data.language=en"), dapo_file)
    assert report["status"] == "written" and report["rows_out"] == first["rows_out"]  # +1 new, -1 CJK

    out.write_bytes(out.read_bytes()[:-10])  # a damaged output is rebuilt, not trusted
    assert _prep(qwen_preset("data.language=en"), dapo_file)["status"] == "written"


def test_hub_fallback_uses_the_raw_cache_without_network(qwen_preset, tmp_path, monkeypatch):
    preset = qwen_preset()
    from gspo_cli.data import fetch

    cached = fetch.raw_cache_path(Path(preset.paths.data_dir) / "aime-2024", "data/aime-2024.parquet", None)
    cached.parent.mkdir(parents=True)
    write_aime_h4(cached)

    def no_network(*a, **k):
        raise AssertionError("must not download when the raw file is in place")

    monkeypatch.setattr(fetch, "download", no_network)
    (report,) = prepare.prepare(preset, datasets=["aime-2024"])
    assert report["rows_out"] == 30
    assert report["input"]["origin"] == "hub-cache"
    assert report["input"]["hub_repo"] == "BytedTsinghua-SIA/AIME-2024"
@pytest.mark.slow


def test_check_prepared(qwen_preset, dapo_file, tmp_path):
    from gspo_cli import layout

    preset = qwen_preset()
    with pytest.raises(DataError, match="dataset dapo-math-17k is not prepared") as exc:
        manifest.check_prepared(preset)
    assert exc.value.hint == "run: gspo prepare-data --preset qwen3-32b-4x16"

    aime = write_aime_h4(tmp_path / "aime.parquet")
    prepare.prepare(preset, inputs={"dapo-math-17k": str(dapo_file), "aime-2024": str(aime)})
    manifest.check_prepared(preset)  # both train and val in place and matching

    with pytest.raises(DataError, match="prompt_style is 'dapo' in .*manifest.json, 'boxed' in the preset"):
        manifest.check_prepared(qwen_preset("data.prompt_style=boxed"))
    with pytest.raises(DataError, match="conflict_policy"):
        manifest.check_prepared(qwen_preset("data.conflict_policy=keep-first"))
    # A pinned revision binds hub downloads only; a local input has none, so this passes.
    manifest.check_prepared(qwen_preset("data.train.revision=abc123"))
    mpath = layout.manifest_path("dapo-math-17k", preset)
    m = json.loads(mpath.read_text())
    m["input"].update(origin="hub", hub_repo="BytedTsinghua-SIA/DAPO-Math-17k", revision="r1")
    mpath.write_text(json.dumps(m))
    with pytest.raises(DataError, match="dapo-math-17k is revision 'r1', the preset pins 'r2'"):
        manifest.check_prepared(qwen_preset("data.train.revision=r2"))
    with pytest.raises(DataError, match="came from BytedTsinghua-SIA/DAPO-Math-17k, the preset names me/fork"):
        manifest.check_prepared(qwen_preset("data.train.hub_repo=me/fork"))

    with pytest.raises(DataError, match="was made from .*, the preset names"):
        manifest.check_prepared(qwen_preset(f"data.train.input={tmp_path / 'other.parquet'}"))

    val = layout.val_file(preset)
    val.write_bytes(val.read_bytes() + b"x")
    with pytest.raises(DataError, match="does not match its manifest"):
        manifest.check_prepared(preset)
    val.unlink()
    with pytest.raises(DataError, match="val.parquet is missing"):
        manifest.check_prepared(preset)


def test_check_prepared_arith(qwen_preset):
    from gspo_cli.config.presets import load_preset

    data_dir = qwen_preset().paths.data_dir
    tiny = load_preset("tiny", [f"paths.data_dir={data_dir}", "data.arith.train_size=20"])
    prepare.prepare(tiny)
    manifest.check_prepared(tiny)
    with pytest.raises(DataError, match="prepared arith does not match preset tiny: arith is .*'train_size': 20"):
        manifest.check_prepared(load_preset("tiny", [f"paths.data_dir={data_dir}", "data.arith.train_size=30"]))

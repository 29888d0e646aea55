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
    m = json.loads(manifest.manifest_path("dapo-math-17k", preset).read_text())
    assert MANIFEST_FIELDS <= set(m)
    assert m["input"]["path"] == str(dapo_file.resolve())
    assert m["input"]["size"] == dapo_file.stat().st_size
    assert m["input"]["sha256"] == manifest.sha256_file(dapo_file)
    assert m["input"]["origin"] == "local" and m["input"]["revision"] is None
    assert m["settings"] == {"prompt_style": "dapo", "dedup": True, "conflict_policy": "drop", "language": None}
    out = manifest.split_path("dapo-math-17k", "train", preset)
    assert m["outputs"]["train"]["sha256"] == manifest.sha256_file(out) == m["output_sha256"]["train"]
    assert m["rows_in"] == 65 and m["rows_out"] == 11
@pytest.mark.slow


def test_rerun_is_a_noop_until_input_or_settings_change(qwen_preset, dapo_file):
    preset = qwen_preset()
    first = _prep(preset, dapo_file)
    out = manifest.split_path("dapo-math-17k", "train", preset)
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

    out = manifest.split_path("dapo-math-17k", "train", qwen_preset("data.language=en"))
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
    preset = qwen_preset()
    with pytest.raises(DataError, match="dataset dapo-math-17k is not prepared") as exc:
        manifest.check_prepared(preset)
    assert exc.value.hint == "run: gspo prepare-data --preset qwen3-32b-4x16"

    aime = write_aime_h4(tmp_path / "aime.parquet")
    prepare.prepare(preset, inputs={"dapo-math-17k": str(dapo_file), "aime-2024": str(aime)})
    manifest.check_prepared(preset)  # both train and val in place and matching

    # other data settings or another input (revision, hub repo, file) are another set, in another folder: not
    # prepared yet, never the first preset's set read as theirs
    for other in ("data.prompt_style=boxed", "data.conflict_policy=keep-first", "data.train.revision=abc123",
                  "data.train.hub_repo=me/fork", f"data.train.input={tmp_path / 'other.parquet'}"):
        with pytest.raises(DataError, match="dataset dapo-math-17k is not prepared for preset"):
            manifest.check_prepared(qwen_preset(other))
    # the set's manifest is still compared with the preset, setting by setting and input by input (a manifest
    # edited or copied by hand)
    mpath = manifest.manifest_path("dapo-math-17k", preset)
    m = json.loads(mpath.read_text())
    m["settings"]["prompt_style"] = "boxed"
    mpath.write_text(json.dumps(m))
    with pytest.raises(DataError, match="prompt_style is 'boxed' in .*manifest.json, 'dapo' in the preset"):
        manifest.check_prepared(preset)
    m["settings"]["prompt_style"] = "dapo"
    m["input"].update(origin="hub", hub_repo="BytedTsinghua-SIA/DAPO-Math-17k", revision="r1")
    mpath.write_text(json.dumps(m))
    manifest.check_prepared(preset)  # the preset pins no revision and names no repo
    import shutil

    for other, refused in (("data.train.revision=r2", "dapo-math-17k is revision 'r1', the preset pins 'r2'"),
                           ("data.train.hub_repo=me/fork",
                            "came from BytedTsinghua-SIA/DAPO-Math-17k, the preset names me/fork")):
        copied = manifest.prepared_dir("dapo-math-17k", qwen_preset(other))  # a set copied into its folder
        shutil.copytree(mpath.parent, copied)
        with pytest.raises(DataError, match=refused):
            manifest.check_prepared(qwen_preset(other))
    m["input"]["path"] = str(tmp_path / "other.parquet")
    mpath.write_text(json.dumps(m))
    manifest.check_prepared(preset)  # the preset names no input file

    val = manifest.val_file(preset)
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
    with pytest.raises(DataError, match=r"dataset arith is not prepared for preset tiny: .*/arith holds 1 set\(s\) with other settings "
                                             r"\(the newest, [0-9a-f]{8}: train_size 20 there, 30 here\)"):
        manifest.check_prepared(load_preset("tiny", [f"paths.data_dir={data_dir}", "data.arith.train_size=30"]))
    # a keyed manifest edited by hand is still compared with the preset, setting by setting
    mpath = manifest.manifest_path("arith", tiny)
    m = json.loads(mpath.read_text())
    m["settings"]["arith"]["train_size"] = 21
    mpath.write_text(json.dumps(m))
    with pytest.raises(DataError, match="prepared arith does not match preset tiny: arith is .*'train_size': 21"):
        manifest.check_prepared(tiny)


def _val_problems(preset) -> int:
    import pyarrow.parquet as pq

    return pq.read_metadata(manifest.val_file(preset)).num_rows


def test_tiny_and_tiny_verl_keep_their_own_sets(tmp_path):
    """Issue #33: tiny (val 200) and tiny-verl (val 64; 32 when the issue was filed) shared data/arith, each
    prepare-data overwriting the other's. Now each preset's settings key its own folder; both sets stay and each preset reads its own."""
    from gspo_cli.config.presets import load_preset

    sets = [f"paths.data_dir={tmp_path / 'data'}"]
    tiny, verl = load_preset("tiny", sets), load_preset("tiny-verl", sets)
    assert tiny.data.arith.val_size != verl.data.arith.val_size  # the premise
    prepare.prepare(tiny)
    tiny_sha = manifest.read("arith", tiny)["outputs"]["val"]["sha256"]
    prepare.prepare(verl)
    assert manifest.prepared_dir("arith", tiny) != manifest.prepared_dir("arith", verl)
    assert manifest.read("arith", tiny)["outputs"]["val"]["sha256"] == tiny_sha  # not overwritten
    assert (_val_problems(tiny), _val_problems(verl)) == (tiny.data.arith.val_size, verl.data.arith.val_size)
    manifest.check_prepared(tiny)
    manifest.check_prepared(verl)
    # same data settings share one set: --set of a setting that does not shape the data changes nothing
    same = load_preset("tiny", [*sets, "actor.lr=2e-3"])
    assert manifest.prepared_dir("arith", same) == manifest.prepared_dir("arith", tiny)
    assert prepare.prepare(same)[0]["status"] == "unchanged"


def test_pre_key_home_is_read_only_when_its_manifest_matches(tmp_path):
    """A home prepared before keyed folders (data/arith/{train,val}.parquet): read when its manifest has the
    preset's settings; another preset gets its own keyed folder and is told the old set is not its own."""
    import shutil

    from gspo_cli.config.presets import load_preset

    sets = [f"paths.data_dir={tmp_path / 'data'}"]
    verl, tiny = load_preset("tiny-verl", sets), load_preset("tiny", sets)
    prepare.prepare(verl)
    keyed = manifest.prepared_dir("arith", verl)
    old = tmp_path / "data" / "arith"
    for f in keyed.iterdir():  # the old layout: the set directly in data/arith/, a manifest without a key
        shutil.move(str(f), old / f.name)
    keyed.rmdir()
    m = json.loads((old / "manifest.json").read_text())
    del m["key"]
    (old / "manifest.json").write_text(json.dumps(m))

    assert manifest.prepared_dir("arith", verl) == old and manifest.is_legacy(old)
    manifest.check_prepared(verl)
    assert manifest.prepared_dir("arith", tiny) != old  # val 200 never reads the old val-64 set
    with pytest.raises(DataError, match=r"not prepared for preset tiny.*holds a set prepared before keyed "
                                        r"folders, with other settings \(val_size 64 there, 200 here\)"):
        manifest.check_prepared(tiny)
    prepare.prepare(tiny)  # writes its own keyed set; the old one is left as it was
    assert _val_problems(tiny) == 200 and _val_problems(verl) == verl.data.arith.val_size == 64
    assert manifest.prepared_dir("arith", verl) == old

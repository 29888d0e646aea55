"""Bad raw input: a clear DataError naming the problem, and no output written (old output left untouched)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from raw_factories import dapo_fixture_rows, dapo_row, write_dapo

from gspo_cli.data import manifest, prepare
from gspo_cli.errors import DataError


def _run(preset, path, name="dapo-math-17k"):
    return prepare.prepare(preset, datasets=[name], inputs={name: str(path)})


def _outputs(preset):
    root = preset.paths.data_dir
    import os

    return sorted(os.listdir(f"{root}/dapo-math-17k")) if os.path.isdir(f"{root}/dapo-math-17k") else []


@pytest.fixture
def prepared(qwen_preset, dapo_file):
    """A previous good run: its files must survive every failed rerun unchanged."""
    preset = qwen_preset()
    (report,) = _run(preset, dapo_file)
    return preset, report


def _assert_untouched(preset, report):
    import json

    from gspo_cli.data.manifest import sha256_file

    d = manifest.prepared_dir("dapo-math-17k", preset)
    assert sorted(p.name for p in d.iterdir()) == ["manifest.json", "train.parquet"]  # no temp files left
    assert sha256_file(d / "train.parquet") == report["outputs"]["train"]["sha256"]
    assert json.loads((d / "manifest.json").read_text())["fingerprint"] == report["fingerprint"]
@pytest.mark.slow


def test_missing_column_names_what_was_found(prepared, tmp_path):
    preset, report = prepared
    rows = [{k: v for k, v in r.items() if k != "reward_model"} for r in dapo_fixture_rows()]
    with pytest.raises(DataError) as exc:
        _run(preset, write_dapo(tmp_path / "x.parquet", rows))
    assert "missing column(s) reward_model" in exc.value.message
    assert "found: data_source, prompt, ability, extra_info" in exc.value.message
    assert "reward_model [{ground_truth, style}]" in exc.value.hint
    _assert_untouched(preset, report)


def test_misnamed_column_gets_a_rename_hint(prepared, tmp_path):
    preset, report = prepared
    table = pq.read_table(write_dapo(tmp_path / "x.parquet", dapo_fixture_rows()))
    table = table.rename_columns(["data_source", "Prompt", "ability", "reward_models", "extra_info"])
    pq.write_table(table, tmp_path / "y.parquet")
    with pytest.raises(DataError) as exc:
        _run(preset, tmp_path / "y.parquet")
    assert "missing column(s) prompt, reward_model" in exc.value.message
    assert "'Prompt' -> 'prompt'" in exc.value.hint and "'reward_models' -> 'reward_model'" in exc.value.hint
    _assert_untouched(preset, report)


def test_wrong_column_type(prepared, tmp_path):
    preset, report = prepared
    table = pa.table({"prompt": [1, 2], "reward_model": [{"ground_truth": "1"}, {"ground_truth": "2"}]})
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(DataError, match="column 'prompt' of t.parquet has type int64"):
        _run(preset, tmp_path / "t.parquet")
    _assert_untouched(preset, report)


def test_empty_file(prepared, tmp_path):
    preset, report = prepared
    (tmp_path / "e.parquet").write_bytes(b"")
    with pytest.raises(DataError, match="is empty"):
        _run(preset, tmp_path / "e.parquet")
    _assert_untouched(preset, report)


def test_parquet_without_rows(prepared, tmp_path):
    preset, report = prepared
    schema = pq.read_schema(write_dapo(tmp_path / "x.parquet", dapo_fixture_rows()))
    pq.write_table(schema.empty_table(), tmp_path / "n.parquet")
    with pytest.raises(DataError, match="has no rows"):
        _run(preset, tmp_path / "n.parquet")
    _assert_untouched(preset, report)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "corrupt-pages"])
def test_unreadable_parquet(prepared, tmp_path, damage):
    preset, report = prepared
    good = write_dapo(tmp_path / "good.parquet", dapo_fixture_rows() * 20, row_group_size=64)
    data = good.read_bytes()
    bad = tmp_path / "bad.parquet"
    if damage == "garbage":
        bad.write_bytes(b"this is not parquet at all" * 100)
    elif damage == "truncated":
        bad.write_bytes(data[: len(data) // 2])
    else:  # footer intact, column data overwritten: fails part-way through reading
        mid = len(data) // 3
        bad.write_bytes(data[:200] + b"\xff" * (mid - 200) + data[mid:])
    expected = "is unreadable part-way through" if damage == "corrupt-pages" else "cannot read .*bad.parquet as parquet"
    with pytest.raises(DataError, match=expected) as exc:
        _run(preset, bad)
    assert "download it again" in exc.value.hint
    _assert_untouched(preset, report)


def test_missing_input_file(prepared, tmp_path):
    preset, report = prepared
    with pytest.raises(DataError, match="does not exist"):
        _run(preset, tmp_path / "nope.parquet")
    _assert_untouched(preset, report)


def test_all_rows_rejected(prepared, tmp_path):
    preset, report = prepared
    rows = [dapo_row(f"P{i}", "not a number", str(i)) for i in range(5)]
    with pytest.raises(DataError, match="no rows left out of 5"):
        _run(preset, write_dapo(tmp_path / "r.parquet", rows))
    _assert_untouched(preset, report)
@pytest.mark.slow


def test_non_answers_are_rejected_and_counted_never_silently(qwen_preset, tmp_path):
    rows = [dapo_row("Good", "3", "1"), dapo_row("Half", "1/2", "2"), dapo_row("None", None, "3"),
            dapo_row("Text", "seven", "4"), dapo_row("Padded", " 007 ", "5")]
    (report,) = _run(qwen_preset(), write_dapo(tmp_path / "r.parquet", rows))
    assert report["rows_in"] == 5 and report["rows_out"] == 2
    assert report["rows_in"] == report["rows_out"] + report["rejected"]["rows"] + report["duplicates_removed"]
    reasons = report["rejected"]["reasons"]
    assert reasons["missing ground truth"]["rows"] == 1
    assert reasons["ground truth is not an integer"]["rows"] == 2
    assert [e["row"] for e in reasons["ground truth is not an integer"]["examples"]] == [1, 3]

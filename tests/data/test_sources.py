"""Each source adapter on synthetic files in its real published schema: counts, policies, AIME shapes."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from raw_factories import aime_problems, write_aime_h4, write_aime_maxwell, write_aime_verl

from gspo_cli.data import manifest, prepare, readers
from gspo_cli.data.prompts import format_prompt, strip_wrapper
from gspo_cli.errors import ConfigError, DataError


def _prepare(preset, name, path, **kw):
    (report,) = prepare.prepare(preset, datasets=[name], inputs={name: str(path)}, **kw)
    return report


def _rows(path):
    return pq.read_table(path).to_pylist()


@pytest.fixture(params=[16_384, 7], ids=["one-batch", "many-batches"])
def batch_rows(request, monkeypatch):
    monkeypatch.setattr(readers, "BATCH_ROWS", request.param)
    return request.param


def test_dapo_counts_dedup_conflicts_rejections(qwen_preset, dapo_file, batch_rows):
    preset = qwen_preset()
    report = _prepare(preset, "dapo-math-17k", dapo_file)
    assert report["status"] == "written"
    assert report["rows_in"] == 65
    assert report["unique_problems"] == 12
    assert report["duplicates_removed"] == 49
    assert report["conflicts"]["problems"] == 1 and report["conflicts"]["rows"] == 3
    assert report["conflicts"]["examples"][0]["answers"] == ["7", "8"]
    reasons = report["rejected"]["reasons"]
    assert report["rejected"]["rows"] == 4
    assert {k: v["rows"] for k, v in reasons.items()} == {
        "empty problem": 1, "ground truth is not an integer": 2, "missing ground truth": 1,
    }
    assert {e["value"] for e in reasons["ground truth is not an integer"]["examples"]} == {"\\frac{1}{2}", "x+1"}
    assert report["language_filter"] is None
    assert report["rows_out"] == 11 == report["outputs"]["train"]["rows"]

    rows = _rows(tmp := manifest.split_path("dapo-math-17k", "train", preset))
    assert tmp.name == "train.parquet"
    problems = [r["extra_info"]["problem"] for r in rows]
    assert len(set(problems)) == len(problems) == 11
    assert "Conflict problem C." not in problems
    for r in rows:  # verl schema, dapo style, raw problem kept
        assert set(r) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
        assert r["data_source"] == "math_dapo" and r["ability"] == "MATH"
        assert r["prompt"] == [{"role": "user", "content": format_prompt(r["extra_info"]["problem"], "dapo")}]
        assert r["reward_model"]["ground_truth"].lstrip("-").isdigit()
        assert r["extra_info"]["split"] == "train"
    assert [r["extra_info"]["index"] for r in rows] == list(range(11))


def test_dapo_output_order_is_first_appearance(qwen_preset, dapo_file):
    raw = pq.read_table(dapo_file).to_pylist()
    seen = []
    for r in raw:
        p = " ".join(strip_wrapper(r["prompt"][0]["content"]).split())
        if p and p not in seen and r["reward_model"]["ground_truth"] not in ("", "x+1", "\\frac{1}{2}"):
            seen.append(p)
    seen = [p for p in seen if not p.startswith("Conflict")]
    preset = qwen_preset()
    _prepare(preset, "dapo-math-17k", dapo_file)
    out = _rows(manifest.split_path("dapo-math-17k", "train", preset))
    assert [" ".join(r["extra_info"]["problem"].split()) for r in out] == seen


def test_keep_first_and_error_policies(qwen_preset, dapo_file):
    first_c = next(r for r in pq.read_table(dapo_file).to_pylist()
                   if r["prompt"][0]["content"] == format_prompt("Conflict problem C.", "dapo"))
    report = _prepare(qwen_preset("data.conflict_policy=keep-first"), "dapo-math-17k", dapo_file)
    assert report["rows_out"] == 12 and report["conflicts"]["policy"] == "keep-first"
    out = _rows(manifest.split_path("dapo-math-17k", "train", qwen_preset("data.conflict_policy=keep-first")))
    (c,) = [r for r in out if r["extra_info"]["problem"] == "Conflict problem C."]
    assert c["reward_model"]["ground_truth"] == first_c["reward_model"]["ground_truth"]

    preset = qwen_preset("data.conflict_policy=error", "paths.data_dir=" + str(dapo_file.parent / "err"))
    with pytest.raises(DataError, match="1 problem.*conflicting answers"):
        _prepare(preset, "dapo-math-17k", dapo_file)
    assert not (dapo_file.parent / "err" / "dapo-math-17k").exists()  # nothing written on error


def test_language_filter_is_reported(qwen_preset, dapo_file):
    report = _prepare(qwen_preset("data.language=en"), "dapo-math-17k", dapo_file)
    assert report["language_filter"] == {"filter": "en", "problems": 1, "rows": 2}
    assert report["rows_out"] == 10


def test_no_dedup_keeps_every_valid_row(qwen_preset, dapo_file):
    report = _prepare(qwen_preset("data.dedup=false"), "dapo-math-17k", dapo_file)
    # 61 valid rows minus the 3 rows of the dropped conflict
    assert report["rows_out"] == 58
    assert report["duplicates_removed"] == 49  # counted (rows that repeat a problem), not removed


@pytest.mark.parametrize("style", ["boxed", "plain"])
def test_prompt_styles(qwen_preset, dapo_file, style):
    preset = qwen_preset(f"data.prompt_style={style}")
    _prepare(preset, "dapo-math-17k", dapo_file)
    for r in _rows(manifest.split_path("dapo-math-17k", "train", preset)):
        content = r["prompt"][0]["content"]
        assert content == format_prompt(r["extra_info"]["problem"], style)
        assert ("\\boxed{}" in content) == (style == "boxed")
        assert "Answer:" not in content


def test_three_aime_shapes_give_the_same_30_rows(qwen_preset, tmp_path):
    files = {
        "verl": write_aime_verl(tmp_path / "aime-2024.parquet"),
        "maxwell": write_aime_maxwell(tmp_path / "aime_2024_problems.parquet"),
        "h4": write_aime_h4(tmp_path / "train-00000-of-00001.parquet"),
    }
    assert pq.read_metadata(files["verl"]).num_rows == 960
    outputs = {}
    for shape, path in files.items():
        preset = qwen_preset(f"paths.data_dir={tmp_path / shape}")
        report = _prepare(preset, "aime-2024", path)
        assert report["rows_out"] == 30
        outputs[shape] = (report["outputs"]["val"]["sha256"], _rows(manifest.split_path("aime-2024", "val", preset)))
    assert outputs["verl"][1] == outputs["maxwell"][1] == outputs["h4"][1]
    assert outputs["verl"][0] == outputs["maxwell"][0] == outputs["h4"][0]  # byte-identical files
    rows = outputs["verl"][1]
    assert all(r["data_source"].startswith("aime") for r in rows)
    expected = {p: str(int(a)) for _, p, a in aime_problems()}
    assert {r["extra_info"]["problem"]: r["reward_model"]["ground_truth"] for r in rows} == expected
    assert [r["extra_info"]["problem"] for r in rows] == sorted(expected)


def test_aime_jsonl_input(qwen_preset, tmp_path):
    path = tmp_path / "aime.jsonl"
    path.write_text("\n".join(json.dumps({"ID": i, "Problem": p, "Solution": "", "Answer": int(a)})
                              for i, p, a in aime_problems()) + "\n")
    report = _prepare(qwen_preset(), "aime-2024", path)
    assert report["rows_out"] == 30


def test_aime_wrong_problem_count_is_an_error(qwen_preset, tmp_path):
    import pyarrow as pa

    table = pq.read_table(write_aime_maxwell(tmp_path / "a.parquet")).slice(0, 29)
    pq.write_table(table, tmp_path / "b.parquet")
    with pytest.raises(DataError, match="gives 29 problems, expected 30"):
        _prepare(qwen_preset(), "aime-2024", tmp_path / "b.parquet")
    pq.write_table(pa.table({"question": ["q"] * 30, "label": ["1"] * 30}), tmp_path / "c.parquet")
    with pytest.raises(DataError, match="match no AIME-2024 shape") as exc:
        _prepare(qwen_preset(), "aime-2024", tmp_path / "c.parquet")
    assert "question, label" in exc.value.message and "Maxwell-Jia" in exc.value.hint


def test_arith_writes_both_splits(qwen_preset):
    from gspo_cli.config.presets import load_preset
    from gspo_cli.data.arith import make_arith_rows

    preset = load_preset("tiny", [f"paths.data_dir={qwen_preset().paths.data_dir}", "data.arith.train_size=50",
                                  "data.arith.val_size=10"])
    (report,) = prepare.prepare(preset)
    assert report["source"] == "arith" and set(report["outputs"]) == {"train", "val"}
    rows = _rows(manifest.split_path("arith", "train", preset))
    assert rows == make_arith_rows("train", 50, 9, ["+"], 0, "plain")
    assert report["outputs"]["val"]["rows"] == 10


def test_unknown_source_and_bad_input_flag(qwen_preset):
    with pytest.raises(ConfigError, match="unknown dataset source 'dapo-math-17'.*did you mean 'dapo-math-17k'"):
        prepare.plan(qwen_preset(), ["dapo-math-17"])
    with pytest.raises(ConfigError, match="not NAME=PATH"):
        prepare.parse_inputs(["dapo.parquet"])
    with pytest.raises(ConfigError, match="does not prepare"):
        prepare.prepare(qwen_preset(), datasets=["aime-2024"], inputs={"dapo-math-17k": "x.parquet"})


def test_plan_covers_train_val_and_eval_benchmarks(qwen_preset):
    from gspo_cli.config.presets import load_preset

    assert [(i.source, i.splits) for i in prepare.plan(qwen_preset())] == [
        ("dapo-math-17k", ("train",)), ("aime-2024", ("val",)),
    ]
    assert [(i.source, i.splits) for i in prepare.plan(qwen_preset(), ["aime-2024"])] == [("aime-2024", ("val",))]
    tiny = load_preset("tiny", ["eval.benchmarks.aime2024.n=1"])
    assert [(i.source, i.splits) for i in prepare.plan(tiny)] == [("arith", ("train", "val")), ("aime-2024", ("val",))]
    tiny = load_preset("tiny", ["eval.benchmarks.aime2024.data=/x.parquet"])  # reads its own file
    assert [i.source for i in prepare.plan(tiny)] == ["arith"]

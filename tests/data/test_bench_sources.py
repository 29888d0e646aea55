"""AIME-2025 and AMC-2023: the adapters on synthetic files in the published schemas (with real records), their
answer normalisation checked against gspo's verifier and verl's math_dapo, and the pinned hub revisions."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from bench_factories import AIME25_REAL, AMC23_REAL, aime25_rows, amc23_rows, write_aime25, write_amc23

from gspo_cli.data import manifest, prepare, sources
from gspo_cli.data.answers import numeric_answer
from gspo_cli.errors import DataError

AIME25_PIN = "6f71d77b0b89b9dabe07ab466c51df33f514df7f"
AMC23_PIN = "80815d37005feb82cd7f8fbc6901d5d3eff43057"


def _prepare(preset, name, path):
    (report,) = prepare.prepare(preset, datasets=[name], inputs={name: str(path)})
    return report


def _val(preset, source):
    return pq.read_table(manifest.split_path(source, "val", preset)).to_pylist()


def test_aime2025_from_its_published_schema(qwen_preset, tmp_path):
    preset = qwen_preset()
    rows = aime25_rows()
    report = _prepare(preset, "aime-2025", write_aime25(tmp_path / "aime25.parquet", rows + rows[:4]))
    assert report["rows_in"] == 34 and report["rows_out"] == 30 and report["duplicates_removed"] == 4
    assert report["shape"] == "problem, answer, id" and "dedup" not in report["settings"]  # always deduplicated
    out = _val(preset, "aime-2025")
    assert [r["extra_info"]["problem"] for r in out] == sorted(r["problem"] for r in rows)
    by_id = {r["extra_info"]["id"]: r for r in out}
    for pid, problem, answer in AIME25_REAL:  # the real records: text, answer and id as published
        assert by_id[pid]["extra_info"]["problem"] == problem
        assert by_id[pid]["reward_model"]["ground_truth"] == answer
        assert by_id[pid]["data_source"] == "aime2025"
        assert by_id[pid]["prompt"][0]["content"].startswith("Solve the following math problem step by step.")


def test_amc2023_answers_are_read_as_numbers(qwen_preset, tmp_path):
    preset = qwen_preset()
    report = _prepare(preset, "amc-2023", write_amc23(tmp_path / "amc23.parquet"))
    assert report["rows_out"] == 40 and report["rejected"]["rows"] == 0
    out = {r["extra_info"]["problem"]: r for r in _val(preset, "amc-2023")}
    # float64 27.0 / -1.0 / 3159.0 in the file -> the integers a response writes
    assert [out[q]["reward_model"]["ground_truth"] for q, _ in AMC23_REAL] == ["27", "-1", "3159"]
    assert {r["data_source"] for r in out.values()} == {"amc2023"}
    assert all("." not in r["reward_model"]["ground_truth"] for r in out.values())


def test_amc2023_non_integers_kept_exact_and_rounded_fractions_refused(qwen_preset, tmp_path):
    preset = qwen_preset()
    rows = amc23_rows(40, extra=[("What is half of one?", 0.5)])
    _prepare(preset, "amc-2023", write_amc23(tmp_path / "half.parquet", rows))
    half = next(r for r in _val(preset, "amc-2023") if r["extra_info"]["problem"] == "What is half of one?")
    assert half["reward_model"]["ground_truth"] == "0.5"
    # control: a third stored as a float is no exact answer: the row is rejected and the count no longer fits
    rows = amc23_rows(40, extra=[("What is a third of one?", 1 / 3)])
    with pytest.raises(DataError, match=r"gives 39 problems, expected 40.*not an exact number"):
        _prepare(preset, "amc-2023", write_amc23(tmp_path / "third.parquet", rows))


def test_answer_normalisation_agrees_with_the_verifiers():
    """The prepared ground truths score the way a right and a wrong response should, with gspo's verifier and verl's
    math_dapo; the raw float text `27.0` (control) is what verl's string comparison gets wrong."""
    from verl.utils.reward_score import math_dapo

    from gspo_cli.rewards import compute_score

    cases = [("aime2025", a, int(a)) for _, _, a in AIME25_REAL] + [
        ("amc2023", numeric_answer(a), int(a)) for _, a in AMC23_REAL]
    for data_source, truth, value in cases:
        assert compute_score(data_source, f"So it is {value}.\nAnswer: {value}", truth)["acc"] is True
        assert compute_score(data_source, f"So it is {value + 1}.\nAnswer: {value + 1}", truth)["acc"] is False
        assert math_dapo.compute_score(f"Answer: {value}", truth)["acc"] is True
    assert math_dapo.compute_score("Answer: 27", "27.0")["acc"] is False  # why 27.0 is written as 27
    assert compute_score("amc2023", "Answer: \\frac{1}{2}", numeric_answer(0.5))["acc"] is True


@pytest.mark.parametrize("rows,needle", [
    (lambda: aime25_rows(29), "gives 29 problems, expected 30"),
    (lambda: [{k: v for k, v in r.items() if k != "answer"} | {"Answer": r["answer"]} for r in aime25_rows()],
     "missing column(s) answer"),
])
def test_aime2025_wrong_file_is_one_clear_error(qwen_preset, tmp_path, rows, needle):
    import pyarrow as pa

    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(rows()), path)
    with pytest.raises(DataError) as err:
        _prepare(qwen_preset(), "aime-2025", path)
    assert needle in str(err.value)


@pytest.mark.parametrize("name,pin,filename", [
    ("aime-2025", AIME25_PIN, "data/train-00000-of-00001-243207c6c994e1bd.parquet"),
    ("amc-2023", AMC23_PIN, "test-00000-of-00001.parquet"),
])
def test_pinned_revision_names_the_download_and_the_cache(qwen_preset, tmp_path, monkeypatch, name, pin, filename):
    src = sources.get(name)
    assert (src.hub_revision, src.hub_filename) == (pin, filename)
    preset = qwen_preset()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError) as err:  # no network: the hint names the pinned file to fetch
        prepare.prepare(preset, datasets=[name])
    assert f"https://huggingface.co/datasets/{src.hub_repo}/resolve/{pin}/{filename}" in err.value.hint
    # a file put where the hint says is read as that revision
    cached = tmp_path / "data" / name / "raw" / pin / filename
    cached.parent.mkdir(parents=True)
    (write_aime25 if name == "aime-2025" else write_amc23)(cached)
    (report,) = prepare.prepare(preset, datasets=[name])
    assert report["input"]["origin"] == "hub-cache" and report["input"]["revision"] == pin


def test_the_pin_is_for_the_sources_own_repo():
    src = sources.get("aime-2025")

    class Spec:
        input = None
        hub_repo = "math-ai/aime25"
        revision = None

    assert prepare.pinned_revision(src, None) == AIME25_PIN
    assert prepare.pinned_revision(src, Spec()) is None  # another repo: its main, never this repo's commit
    Spec.revision = "abc123"
    assert prepare.pinned_revision(src, Spec()) == "abc123"  # the preset's own pin wins

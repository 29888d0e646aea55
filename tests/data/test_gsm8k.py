"""GSM8K sources (`gsm8k`, `gsm8k-test`): synthetic parquet in openai/gsm8k's schema (question, answer ending in
`#### N`) becomes the rows verl's examples/data_preprocess/gsm8k.py writes, scored by verl's own gsm8k rule."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.slow  # CLI subprocesses, like tests/data/test_cli.py

PRESET = "nightly-gspo-qwen3-8b-a2"
INSTRUCTION = 'Let\'s think step by step and output the final answer after "####".'  # verl's gsm8k.py
ROWS = [
    {"question": "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
                 "How many clips did Natalia sell altogether in April and May?",
     "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72"},
    {"question": "A shop sold 1,200 pens at $2 each. How much money did it make?",
     "answer": "1200*2=<<1200*2=2400>>2400\n#### 2,400"},
    {"question": "It is 3 degrees below zero. What is the temperature?", "answer": "#### -3"},
    {"question": "A row without a final answer", "answer": "no hashes here"},
]


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_rows_are_verls_gsm8k_rows_and_verl_scores_them(gspo, gspo_home, tmp_path):
    train = _write(tmp_path / "train.parquet", ROWS)
    test = _write(tmp_path / "test.parquet", ROWS[:2])
    proc = gspo("prepare-data", "--preset", PRESET, "--local", "--json", "--dataset", "gsm8k", "--dataset",
                "gsm8k-test", "--input", f"gsm8k={train}", "--input", f"gsm8k-test={test}")  # not its AIME eval set
    assert proc.returncode == 0, proc.stderr
    by_source = {d["source"]: d for d in json.loads(proc.stdout)["datasets"]}
    assert by_source["gsm8k"]["rows_out"] == 3 and by_source["gsm8k"]["rejected"]["rows"] == 1
    keyed = {source: gspo_home / "data" / source / d["key"] for source, d in by_source.items()}  # data/manifest.py
    rows = pq.read_table(keyed["gsm8k"] / "train.parquet").to_pylist()
    assert [r["prompt"] for r in rows] == [[{"role": "user", "content": q["question"] + " " + INSTRUCTION}]
                                          for q in ROWS[:3]]  # file order kept, no dedup
    assert [r["reward_model"] for r in rows] == [{"ground_truth": g, "style": "rule"} for g in ("72", "2400", "-3")]
    assert {r["data_source"] for r in rows} == {"openai/gsm8k"} and {r["ability"] for r in rows} == {"math"}
    assert pq.read_table(keyed["gsm8k-test"] / "val.parquet").num_rows == 2

    from verl.utils.reward_score import default_compute_score  # the oracle: what the nightly job trains with

    first = rows[0]
    assert default_compute_score(first["data_source"], "so 72 clips.\n#### 72", first["reward_model"]["ground_truth"]) == 1.0
    assert default_compute_score(first["data_source"], "#### 71", first["reward_model"]["ground_truth"]) == 0.0


def test_offline_names_the_openai_gsm8k_file_and_the_hub_cache_is_used(gspo, gspo_home):
    proc = gspo("prepare-data", "--preset", PRESET, "--local", "--dataset", "gsm8k", env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    url = "https://huggingface.co/datasets/openai/gsm8k/resolve/main/main/train-00000-of-00001.parquet"
    dest = gspo_home / "data" / "gsm8k" / "raw" / "main" / "main" / "train-00000-of-00001.parquet"
    assert f"download {url} and put it at {dest}" in proc.stderr
    _write(dest, ROWS[:3])
    proc = gspo("prepare-data", "--preset", PRESET, "--local", "--dataset", "gsm8k", "--json",
                env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["datasets"][0]
    assert report["input"]["origin"] == "hub-cache" and report["rows_out"] == 3


def test_a_file_that_is_not_gsm8k_is_refused_in_one_line(gspo, tmp_path):
    bad = _write(tmp_path / "bad.parquet", [{"problem": "x", "solution": "y"}])
    proc = gspo("prepare-data", "--preset", PRESET, "--local", "--dataset", "gsm8k", "--input", f"gsm8k={bad}")
    assert proc.returncode == 2 and proc.stderr.startswith("Error:") and "question" in proc.stderr

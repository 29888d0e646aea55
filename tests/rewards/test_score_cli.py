"""`gspo score`: the real command in a subprocess on real JSONL/parquet files, verl's checker as the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gspo_cli.rewards import compute_score
from gspo_cli.rewards.scoring_file import preset_data_source, preset_verifier

ROWS = [
    {"response": "Work.\n\nAnswer: 36", "ground_truth": "36", "data_source": "math_dapo"},  # right
    {"response": "Work.\n\nAnswer: 35", "ground_truth": "36", "data_source": "math_dapo"},  # wrong answer
    {"response": "We get 36.\n\nAnswer: \\boxed{}", "ground_truth": "36", "data_source": "math_dapo"},  # empty box
    {"response": "<think>x</think> The answer is 42.", "ground_truth": "42", "data_source": "math_dapo"},  # prose
    {"response": "Thus the total is 36. Now to double check we compute the", "ground_truth": "36"},  # cut off
    {"response": "Answer: 12 \\text{ m}^2", "ground_truth": "12", "data_source": "aime2024"},  # unit
]


def _write_jsonl(path: Path, rows: list, raw_lines: dict[int, str] | None = None) -> Path:
    lines = [json.dumps(r) for r in rows]
    for i, text in (raw_lines or {}).items():
        lines.insert(i, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _json(proc) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_jsonl_accuracy_and_extraction_match_compute_score(gspo, tmp_path):
    f = _write_jsonl(tmp_path / "r.jsonl", ROWS)
    rep = _json(gspo("score", str(f), "--preset", "qwen3-8b-2x8", "--json"))
    expected = [compute_score(r.get("data_source", "math_dapo"), r["response"], r["ground_truth"]) for r in ROWS]
    assert rep["rows"] == 6 and rep["verifier"] == "gspo" and rep["default_data_source"] == "math_dapo"
    assert rep["correct"] == sum(e["acc"] for e in expected) == 3  # rows 1, 4, 6
    assert rep["extracted"] == sum(bool(e["pred"]) for e in expected) == 4
    assert rep["how"]["empty_answer"] == 1 and rep["how"]["truncated"] == 1


def test_parquet_reads_the_same(gspo, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "r.parquet"
    cols = {k: [r.get(k) for r in ROWS] for k in ("response", "ground_truth", "data_source")}
    pq.write_table(pa.table(cols), f)
    rep = _json(gspo("score", str(f), "--data-source", "math_dapo", "--json"))
    assert (rep["rows"], rep["correct"], rep["extracted"]) == (6, 3, 4)


def test_compare_verl_counts_disagreements_like_verl_itself(gspo, tmp_path):
    from verl.utils.reward_score import default_compute_score

    f = _write_jsonl(tmp_path / "r.jsonl", ROWS)
    rep = _json(gspo("score", str(f), "--preset", "qwen3-8b-2x8", "--compare", "verl", "--json"))
    ours = [compute_score(r.get("data_source", "math_dapo"), r["response"], r["ground_truth"])["acc"] for r in ROWS]
    theirs = [default_compute_score(r.get("data_source", "math_dapo"), r["response"], r["ground_truth"])["acc"]
              for r in ROWS]
    c = rep["compare"]
    assert c["peer"] == "verl" and c["peer_correct"] == sum(theirs)
    assert c["disagree"] == sum(a != b for a, b in zip(ours, theirs, strict=True)) == len(c["examples"])
    assert c["only_ours"] == sum(a and not b for a, b in zip(ours, theirs, strict=True))
    assert {e["line"] for e in c["examples"]} == {i + 1 for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
                                                   if a != b}


def test_compare_says_once_which_rows_the_peer_cannot_score(gspo, tmp_path):
    """verl has no scorer for `arith`: said once up front (rows, data_source, verl's error), those rows left out of
    the comparison, not listed as disagreements one by one."""
    from verl.utils.reward_score import default_compute_score

    with pytest.raises(NotImplementedError) as verl_says:
        default_compute_score("arith", "Answer: 3", "3")
    arith = [{"response": f"Answer: {i}", "ground_truth": str(i % 3), "data_source": "arith"} for i in range(20)]
    f = _write_jsonl(tmp_path / "r.jsonl", ROWS + arith)
    rep = _json(gspo("score", str(f), "--data-source", "math_dapo", "--compare", "verl", "--json"))
    c = rep["compare"]
    assert c["scored"] == 6 and c["peer_errors"] == 20
    assert c["unscorable"] == [{"data_source": "arith", "rows": 20,
                                "error": f"NotImplementedError: {' '.join(str(verl_says.value).split())}"[:200]}]
    assert all(e["data_source"] != "arith" for e in c["examples"])
    proc = gspo("score", str(f), "--data-source", "math_dapo", "--compare", "verl", env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("note: verl cannot score 20 row(s) with data_source 'arith': NotImplementedError")
    assert proc.stdout.count("NotImplementedError") == 1 and "of the 6 rows verl scores" in proc.stdout


def test_text_report_shows_the_comparison_table(gspo, tmp_path):
    f = _write_jsonl(tmp_path / "r.jsonl", ROWS)
    proc = gspo("score", str(f), "--data-source", "math_dapo", "--compare", "verl")
    assert proc.returncode == 0, proc.stderr
    for text in ("accuracy", "extraction rate", "gspo vs verl", "Disagreements", "empty_answer"):
        assert text in proc.stdout, text


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"response": "Answer: 1", "ground_truth": ', ":3: not valid JSON"),
        ('{"response": "Answer: 1"}', ":3: no `ground_truth`"),
        ('{"ground_truth": "1"}', ":3: no text `response`"),
        ('["Answer: 1", "1"]', ":3: expected an object"),
        ('{"response": "Answer: 1", "ground_truth": "1", "data_source": 7}', ":3: `data_source` must be a string"),
    ],
)
def test_a_bad_row_is_reported_with_its_line_and_exit_2(gspo, tmp_path, raw, message):
    f = _write_jsonl(tmp_path / "bad.jsonl", ROWS[:3], {2: raw})  # the bad row is line 3
    proc = gspo("score", str(f))
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl"], "no such file"),
        (["{f}", "--compare", "sympy"], "--compare 'sympy'"),
        (["{f}", "--preset", "no-such-preset"], "no-such-preset"),
    ],
)
def test_usage_errors_are_one_line(gspo, tmp_path, args, message):
    f = _write_jsonl(tmp_path / "r.jsonl", ROWS)
    proc = gspo("score", *[a.format(f=f) for a in args])
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_the_verifier_choice_is_read_from_the_preset():
    from gspo_cli.config.presets import load_preset

    assert preset_verifier(load_preset("qwen3-8b-2x8")) == "gspo"
    assert preset_verifier(load_preset("qwen3-8b-2x8", ["reward.verifier=verl"])) == "verl"
    assert preset_data_source(load_preset("tiny")) == "arith"
    assert preset_data_source(load_preset("qwen3-8b-2x8")) == "math_dapo"


def test_a_preset_with_reward_verifier_verl_scores_with_verl(gspo, tmp_path):
    from verl.utils.reward_score import default_compute_score

    f = _write_jsonl(tmp_path / "r.jsonl", ROWS)
    rep = _json(gspo("score", str(f), "--preset", "qwen3-8b-2x8", "--set", "reward.verifier=verl",
                     "--compare", "math-verify", "--json"))
    theirs = [default_compute_score(r.get("data_source", "math_dapo"), r["response"], r["ground_truth"])["acc"]
              for r in ROWS]
    assert rep["verifier"] == "verl" and rep["correct"] == sum(theirs) and rep["compare"]["peer"] == "math-verify"


def test_a_bad_parquet_row_is_reported_with_its_row_number(gspo, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"response": ["Answer: 1", "Answer: 2", "Answer: 3"], "ground_truth": ["1", None, "3"]}), f)
    proc = gspo("score", str(f))
    assert proc.returncode == 2 and "bad.parquet row 2: no `ground_truth`" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr

"""End to end with the hf backend on a tiny Qwen3 run: `gspo eval arith|aime2024 --model <run>` through the real
CLI (in-process job), then every number in results.json recomputed independently from samples.jsonl."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def gspo(*args: str, home: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "GSPO_HOME": str(home), "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    return subprocess.run([sys.executable, "-m", "gspo_cli", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)


def load_samples(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recompute_and_compare(results: dict, samples: list[dict]) -> None:
    """Independent re-derivation (Counter votes, math.comb, numpy percentiles) of every reported metric."""
    n = results["settings"]["n"]
    ks = results["settings"]["k"]
    by_problem: dict[int, list[dict]] = {}
    for s in samples:
        by_problem.setdefault(s["problem"], []).append(s)
    assert len(by_problem) == results["data"]["problems"] == results["metrics"]["num_problems"]
    m = results["metrics"]
    per = {row["problem"]: row for row in results["per_problem"]}
    accs, passes, majs = [], {k: [] for k in ks}, {k: [] for k in ks}
    for pid, rows in sorted(by_problem.items()):
        rows.sort(key=lambda r: r["sample"])
        assert [r["sample"] for r in rows] == list(range(n))
        c = sum(r["correct"] for r in rows)
        accs.append(c / n)
        assert per[pid]["correct"] == c
        for k in ks:
            p = 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)
            passes[k].append(p)
            assert per[pid][f"pass@{k}"] == pytest.approx(p)
            wins = 0
            for b in range(n // k):
                block = rows[b * k:(b + 1) * k]
                votes = Counter(r["pred"].strip() for r in block if r["pred"] and r["pred"].strip())
                if not votes:
                    continue
                top = max(votes.values())
                # tie rule: the tied answer that appears first in the block
                winner = next(r for r in block if r["pred"] and votes.get(r["pred"].strip()) == top)
                wins += winner["correct"]
            majs[k].append(wins / (n // k))
            assert per[pid][f"maj@{k}"] == pytest.approx(majs[k][-1])

    def se(v):
        return float(np.std(v, ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0

    assert m[f"avg@{n}"] == pytest.approx(np.mean([s["correct"] for s in samples]))
    assert m[f"avg@{n}"] == pytest.approx(np.mean(accs)) == pytest.approx(results["accuracy"])
    assert m[f"avg@{n}_stderr"] == pytest.approx(se(accs))
    for k in ks:
        assert m[f"pass@{k}"] == pytest.approx(np.mean(passes[k]))
        assert m[f"pass@{k}_stderr"] == pytest.approx(se(passes[k]))
        assert m[f"maj@{k}"] == pytest.approx(np.mean(majs[k]))
    assert m["extraction_rate"] == pytest.approx(np.mean([bool(s["pred"]) for s in samples]))
    assert m["truncation_rate"] == pytest.approx(np.mean([s["finish_reason"] == "length" for s in samples]))
    lengths = [s["response_tokens"] for s in samples]
    assert max(lengths) <= results["settings"]["max_tokens"]
    assert m["response_length_mean"] == pytest.approx(np.mean(lengths))
    assert m["response_length_p50"] == pytest.approx(np.percentile(lengths, 50))
    assert m["response_length_p90"] == pytest.approx(np.percentile(lengths, 90))


def rescore(samples: list[dict]) -> None:
    """The verdicts are the training reward's (`compute_score`), sample by sample."""
    from gspo_cli.rewards import compute_score

    for s in samples:
        v = compute_score(s["data_source"], s["response"], s["ground_truth"])
        assert bool(v["acc"]) == s["correct"] and (v["pred"] or None) == s["pred"], s


def eval_dirs(home: Path, benchmark: str, step: int) -> list[Path]:
    """The eval folders of one step: <benchmark>-<step>-<8 hex digest of the settings>."""
    found = sorted((home / "runs" / "tiny-test" / "eval").glob(f"{benchmark}-{step}-*"))
    assert all(re.fullmatch(rf"{benchmark}-{step}-[0-9a-f]{{8}}", d.name) for d in found), found
    return found


def eval_dir(home: Path, benchmark: str, step: int) -> Path:
    found = eval_dirs(home, benchmark, step)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.timeout(1500)  # three eval processes (one reuses) and runs show: slow on a loaded 2-core box
def test_two_evals_of_one_step_with_other_settings_are_both_kept(eval_home):
    """Other settings add a folder, the same settings reuse it; `runs show` lists each; eval of a run defaults to
    the run's own resolved preset."""
    from gspo_cli.config.presets import load_preset
    from gspo_cli.config.schema import to_jsonable

    run = eval_home / "runs" / "tiny-test"
    preset = to_jsonable(load_preset("tiny", ["eval.benchmarks.arith.max_tokens=4", "eval.benchmarks.arith.n=2",
                                              "eval.benchmarks.arith.k=[1,2]"]))
    (run / "config.yaml").write_text(yaml.safe_dump(preset, sort_keys=False))
    first = gspo("eval", "arith", "--model", "tiny-test", "--local", "--json", "--limit", "4", home=eval_home)
    assert first.returncode == 0, first.stderr[-3000:]
    assert f"Preset: the run's own ({run / 'config.yaml'})" in first.stderr
    a = json.loads(first.stdout)
    assert (a["settings"]["max_tokens"], a["settings"]["n"]) == (4, 2)  # the run's preset, not the schema's
    second = gspo("eval", "arith", "--model", "tiny-test", "--local", "--json", "--limit", "4", "--max-tokens", "8",
                  home=eval_home)
    assert second.returncode == 0, second.stderr[-3000:]
    b = json.loads(second.stdout)
    dirs = eval_dirs(eval_home, "arith", 5)
    assert len(dirs) == 2 and {Path(a["files"]["results"]).parent, Path(b["files"]["results"]).parent} == set(dirs)
    again = gspo("eval", "arith", "--model", "tiny-test", "--local", "--json", "--limit", "4", home=eval_home)
    assert again.returncode == 0 and "Already evaluated with these settings" in again.stderr
    assert json.loads(again.stdout) == a and len(eval_dirs(eval_home, "arith", 5)) == 2
    shown = gspo("runs", "show", "tiny-test", home=eval_home, env={"COLUMNS": "200"})
    lines = [ln for ln in shown.stdout.splitlines() if ln.strip().startswith("arith step 5")]
    assert len(lines) == 2 and {"max 4 tok" in ln for ln in lines} == {True, False}, shown.stdout
    assert all("limit 4" in ln for ln in lines)
    assert all(d.name in shown.stdout for d in dirs)


@pytest.mark.slow
def test_eval_arith_on_tiny_run(eval_home):
    proc = gspo("eval", "arith", "--preset", "tiny", "--model", "tiny-test", "--local", "--n", "4", "--k", "1,2,4",
                "--temperature", "1.0", "--max-tokens", "8", "--json", home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    out = eval_dir(eval_home, "arith", 5)
    assert json.loads((out / "results.json").read_text()) == results
    samples = load_samples(out / "samples.jsonl")
    assert len(samples) == 24 * 4
    recompute_and_compare(results, samples)
    rescore(samples)
    s = results["settings"]
    assert (s["n"], s["k"], s["temperature"], s["max_tokens"], s["backend"], s["device"]) == (
        4, [1, 2, 4], 1.0, 8, "hf", "cpu")  # flags over the tiny preset's eval.arith section
    assert s["prompt_style"] == "plain" and s["enable_thinking"] is False and s["preset"] == "tiny"
    assert results["model"]["run_name"] == "tiny-test" and results["model"]["step"] == 5
    # the nudged tiny model gives a mix of outcomes, so the recomputation above is not trivially all-zero
    assert 0 < results["metrics"]["pass@4"] and results["metrics"]["avg@4"] < 1
    assert results["metrics"]["pass@4"] >= results["metrics"]["pass@1"]


def test_eval_aime2024_on_tiny_run_thinking_switch(eval_home):
    args = ["eval", "aime2024", "--preset", "tiny", "--model", "tiny-test:5", "--local", "--n", "2", "--k", "1,2",
            "--max-tokens", "6", "--batch-size", "60"]
    proc = gspo(*args, "--thinking", home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "avg@2" in proc.stdout and "pass@2" in proc.stdout  # the rich table
    out = eval_dir(eval_home, "aime2024", 5)
    results = json.loads((out / "results.json").read_text())
    samples = load_samples(out / "samples.jsonl")
    assert len(samples) == 30 * 2 and results["data"]["problems"] == 30
    recompute_and_compare(results, samples)
    rescore(samples)
    s = results["settings"]
    # registry defaults for AIME (DAPO sampling) where the flags say nothing
    assert (s["temperature"], s["top_p"], s["enable_thinking"]) == (1.0, 0.7, True)
    first = samples[0]["prompt"]
    assert "Remember to put your answer on its own line" in first and "</think>" not in first
    # --no-thinking: Qwen3's template closes an empty think block in the generation prompt
    proc = gspo(*args, "--no-thinking", "--prompt-style", "boxed", "--limit", "3", home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    other = next(d for d in eval_dirs(eval_home, "aime2024", 5) if d != out)  # other settings: another folder
    assert json.loads((out / "results.json").read_text()) == results  # the first eval is kept as it was
    samples = load_samples(other / "samples.jsonl")
    assert samples[0]["prompt"].endswith("<think>\n\n</think>\n\n")
    assert "\\boxed{}" in samples[0]["prompt"] and "Answer:" not in samples[0]["prompt"]
    second = json.loads((other / "results.json").read_text())
    assert second["settings"]["enable_thinking"] is False and second["settings"]["prompt_style"] == "boxed"


def test_eval_bare_hf_folder_goes_to_evals_dir(eval_home, tiny_model_dir, tmp_path, arith_writer):
    data = arith_writer(tmp_path / "mine.parquet", rows=3)
    proc = gspo("eval", "mybench", "--model", str(tiny_model_dir), "--data", str(data), "--local", "--json",
                "--max-tokens", "4", home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    out = Path(results["files"]["results"]).parent
    assert out.parent == eval_home / "evals" and out.name.startswith("model-mybench-")
    assert results["model"]["run"] is None and results["metrics"]["num_problems"] == 3


@pytest.mark.parametrize("args,needle", [
    (["eval", "nosuch", "--model", "tiny-test"], "unknown benchmark"),
    (["eval", "arith", "--model", "nope-run"], "no such folder, run or hub id"),
    (["eval", "arith", "--model", "tiny-test:7"], "no checkpoint at step"),
    (["eval", "arith", "--model", "tiny-test", "--n", "2", "--k", "4"], "larger than n"),
    (["eval", "arith", "--preset", "tiny", "--set", "eval.backend=tgi", "--model", "tiny-test"], "eval.backend"),
])
def test_eval_bad_input_is_one_clean_line(eval_home, args, needle):
    proc = gspo(*args, "--local", home=eval_home)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.ray
def test_eval_as_ray_job(eval_home, ray_head):
    """The default path: a Ray job on a real local head, followed to the end; --json prints results.json."""
    proc = gspo("eval", "arith", "--preset", "tiny", "--model", "tiny-test", "--n", "2", "--k", "1,2",
                "--address", ray_head.dashboard_url, "--json", home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "succeeded" in proc.stderr
    results = json.loads(proc.stdout)
    out = eval_dir(eval_home, "arith", 5)
    assert json.loads((out / "results.json").read_text()) == results
    recompute_and_compare(results, load_samples(out / "samples.jsonl"))


def test_unreachable_hub_id_fails_in_the_cli_before_any_job(eval_home):
    """A hub id neither cached nor reachable: one line with the way out, from the CLI (no job, no retries)."""
    proc = gspo("eval", "arith", "--model", "nobody/no-such-model", "--address", "http://127.0.0.1:9",
                home=eval_home, env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": ""})
    assert proc.returncode == 2, proc.stderr
    assert "Error: --model nobody/no-such-model is not a local folder, not in the Hugging Face cache, and the hub " \
           "(http://127.0.0.1:9) cannot be reached from here" in proc.stderr
    assert "huggingface-cli download nobody/no-such-model" in proc.stderr and "Traceback" not in proc.stderr
    assert "Submitted" not in proc.stderr  # refused before a job (the --address would not even answer)

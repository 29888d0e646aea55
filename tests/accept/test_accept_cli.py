"""`gspo accept` end to end: a real native run of the tiny preset records a baseline, a repeat passes against it,
a changed setting fails with a readable verdict (exit 1), `--json` parses; `--run` judges a finished run."""

from __future__ import annotations

import json

import pytest

from gspo_cli.accept import rules

# CLI subprocesses (and one real training run): out of `make test-fast`, like tests/data/test_cli.py
pytestmark = pytest.mark.slow


def _fake_run(home, name: str, reward: float) -> str:
    run = home / "runs" / name
    run.mkdir(parents=True)
    (run / "job_state.json").write_text(json.dumps({"state": "succeeded"}))  # what makes a folder a run
    lines = [json.dumps({"step": s, "data": {rules.REWARD: reward, rules.PROBS_DIFF: 1e-3, rules.THROUGHPUT: 100.0,
                                             rules.STEP_TIME: 1.0, rules.MEMORY: 2.0}}) for s in range(1, 16)]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return name


def test_record_from_a_run_then_judge_runs(gspo, gspo_home):
    _fake_run(gspo_home, "base", 0.5)
    res = gspo("accept", "--preset", "tiny", "--record", "--run", "base")
    assert res.returncode == 0, res.stderr
    saved = json.loads((gspo_home / "baselines" / "tiny.json").read_text())
    assert saved["values"][rules.REWARD] == 0.5 and saved["recorded"]["window_steps"] == list(range(5, 15))
    assert [r["advisory"] for r in saved["rules"]] == [False, True, True, False, False]  # tiny runs on a CPU
    _fake_run(gspo_home, "same", 0.54)
    ok = gspo("accept", "--preset", "tiny", "--run", "same", "--json")
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert out["verdict"] == "pass" and [m["status"] for m in out["metrics"]] == ["pass"] * 5
    _fake_run(gspo_home, "worse", 0.44)
    bad = gspo("accept", "--preset", "tiny", "--run", "worse")
    assert bad.returncode == 1
    assert "Verdict: FAIL (1 of 5 metrics out of tolerance)" in bad.stdout
    assert "fail: critic/rewards/mean" in bad.stdout and "gspo env doctor --explain" in bad.stdout
    listed = gspo("accept", "--list")
    assert "recorded: recorded:tiny" in listed.stdout and "run_gspo_qwen3_8b_fsdp2_npu" in listed.stdout


def test_errors_are_one_line(gspo):
    res = gspo("accept", "--preset", "tiny")
    assert res.returncode == 2 and "Error: no acceptance baseline for preset 'tiny'" in res.stderr
    assert "Traceback" not in res.stderr
    res = gspo("accept", "--baseline", "run_gspo_qwen3_30b_megatron_npu", "--preset", "nightly-gspo-qwen3-8b-a2")
    assert res.returncode == 2 and "differs from the preset of baseline run_gspo_qwen3_30b_megatron_npu" in res.stderr


def test_list_shows_both_upstream_gspo_baselines_runnable(gspo):
    listed = gspo("accept", "--list")
    assert listed.returncode == 0, listed.stderr
    out = " ".join(listed.stdout.split())
    assert "runs with: gspo accept --preset nightly-gspo-qwen3-8b-a2 (verl's fsdp2 route)" in out
    assert "runs with: gspo accept --preset nightly-gspo-qwen3-30b-a3 (verl's megatron route)" in out
    assert "does not compile" not in out


def test_tiny_native_record_pass_and_a_changed_setting_fails(gspo, gspo_home):
    assert gspo("prepare-data", "--preset", "tiny", "--local").returncode == 0  # no Ray head left behind
    rec = gspo("accept", "--preset", "tiny", "--record", "--local", "--repeat", "2")
    assert rec.returncode == 0, rec.stderr[-2000:]
    saved = json.loads((gspo_home / "baselines" / "tiny.json").read_text())
    first, second = (r["values"] for r in saved["recorded"]["repeats"])
    # the native engine repeats a seeded CPU run exactly: no spread, so no limit widens (time metrics aside)
    assert first[rules.REWARD] == second[rules.REWARD] and first[rules.PROBS_DIFF] == second[rules.PROBS_DIFF]
    assert all(r["widened_from"] is None for r in saved["rules"] if r["metric"] in (rules.REWARD, rules.PROBS_DIFF))
    same = gspo("accept", "--preset", "tiny", "--local", "--json")
    assert same.returncode == 0, same.stderr[-2000:]
    out = json.loads(same.stdout)
    by = {m["metric"]: m for m in out["metrics"]}
    # seeded CPU run: the repeat gives the same reward and log-prob gap (time metrics are advisory here)
    assert by[rules.REWARD]["difference"] == pytest.approx(0.0, abs=1e-9)
    assert by[rules.PROBS_DIFF]["difference"] == pytest.approx(0.0, abs=1e-6)
    assert by[rules.MEMORY]["status"] == "skipped"  # the native engine logs no device memory
    changed = gspo("accept", "--preset", "tiny", "--local", "--set", "actor.lr=2e-3")
    assert changed.returncode == 1, changed.stderr[-2000:]
    assert "fail" in changed.stdout and "Verdict: FAIL" in changed.stdout

"""`gspo report`: PNG charts + summary.md from a run's metrics.jsonl (verl file-logger format) and eval results."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from gspo_cli.errors import DataError
from gspo_cli.eval import metrics as M
from gspo_cli.metrics import names as metric_names
from gspo_cli.metrics.jsonl import read_series
from gspo_cli.report import build as report
from gspo_cli.report import charts
from gspo_cli.report import summary as report_summary

ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_demo_run(run: Path, steps: int = 60, seed: int = 0) -> dict[int, dict]:
    """A tiny-demo-shaped run: reward climbing from ~-0.6 to ~0.9, validation every 10 steps, a resume that
    re-logs steps 31-32, a torn last line, and eval results at steps 20/40/60."""
    rng = random.Random(seed)
    logged: dict[int, dict] = {}
    lines = []
    for step in range(1, steps + 1):
        p = 1 / (1 + math.exp(-(step - 25) / 6))
        data = {
            "critic/score/mean": -0.6 + 1.5 * p + rng.gauss(0, 0.08),
            "critic/rewards/mean": -0.6 + 1.5 * p + rng.gauss(0, 0.08),
            "response_length/mean": 6 - 4 * p + rng.gauss(0, 0.3),
            "response_length/max": 8.0,
            "actor/pg_clipfrac": max(0.0, 0.3 * (1 - p) + rng.gauss(0, 0.03)),
            "actor/ppo_kl": rng.gauss(0, 2e-4),
            "actor/grad_norm": 2.0 * (1 - p) + 0.2 + abs(rng.gauss(0, 0.1)),
            "timing_s/gen": 1.2 + rng.random() * 0.3,
            "timing_s/update_actor": 0.8 + rng.random() * 0.2,
            "training/global_step": step,
            "note": "strings are ignored",
        }
        data["timing_s/step"] = data["timing_s/gen"] + data["timing_s/update_actor"] + 0.3
        if step % 10 == 0:
            data["val-core/arith/acc/mean@1"] = min(1.0, p + rng.gauss(0, 0.03))
            data["val-core/arith/acc/std@1"] = 0.5  # verl's other val statistics are not accuracy curves
            data["val-core/arith/acc/best@1/mean"] = 1.0
        lines.append(json.dumps({"step": step, "data": data}))
        logged[step] = data
        if step == 32:  # killed after step 32, resumed from the step-30 checkpoint: 31 and 32 logged again
            for again in (31, 32):
                redo = dict(logged[again], **{"critic/score/mean": logged[again]["critic/score/mean"] + 0.05})
                lines.append(json.dumps({"step": again, "data": redo}))
                logged[again] = redo
    run.mkdir(parents=True, exist_ok=True)
    (run / "metrics.jsonl").write_text("\n".join(lines) + '\n{"step": 61, "data": {"critic/sco')
    (run / "config.yaml").write_text("name: tiny\nmodel:\n  path: builtin:tiny\ntrainer:\n  engine: native\n")
    for step, acc in ((20, 0.35), (40, 0.8), (60, 0.95)):
        write_eval(run / "eval" / f"arith-{step}", step, acc, rng)
    return logged


def write_eval(folder: Path, step: int, acc: float, rng: random.Random, n: int = 4) -> dict:
    problems = [[M.ScoredSample(rng.random() < acc, str(rng.randint(0, 18)), rng.randint(1, 4), False)
                 for _ in range(n)] for _ in range(50)]
    summary = M.summarize(problems, [1, 2, 4])
    res = {"benchmark": "arith", "accuracy": summary["metrics"][f"avg@{n}"], "metrics": summary["metrics"],
           "settings": {"n": n, "k": [1, 2, 4], "temperature": 1.0, "top_p": 1.0, "max_tokens": 8},
           "model": {"step": step}, "per_problem": summary["per_problem"]}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(res))
    return res


def test_read_metrics_last_line_wins_and_torn_line_skipped(tmp_path):
    logged = write_demo_run(tmp_path / "run")
    series = read_series(tmp_path / "run" / "metrics.jsonl")
    score = series["critic/score/mean"]
    assert [s for s, _ in score] == list(range(1, 61))  # no duplicated or torn step
    assert dict(score)[31] == pytest.approx(logged[31]["critic/score/mean"])  # the resumed value
    assert "note" not in series and len(series["val-core/arith/acc/mean@1"]) == 6


def test_read_metrics_a_relogged_step_replaces_the_old_line_whole(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(json.dumps({"step": 1, "data": {"a": 1.0, "stale": 5.0}}) + "\n"
                    + json.dumps({"step": 2, "data": {"a": 2.0}}) + "\n"
                    + json.dumps({"step": 1, "data": {"a": 1.5}}) + "\n")
    series = read_series(path)
    assert series == {"a": [(1, 1.5), (2, 2.0)]}


def test_val_keys_with_slashes_in_the_data_source():
    series = {"val-core/openai/gsm8k/acc/mean@1": [(10, 0.5)], "val-aux/openai/gsm8k/reward/mean@1": [(10, 0.1)],
              "val-core/openai/gsm8k/acc/std@1": [(10, 0.2)], "val-core/aime2024/acc/mean@32": [(10, 0.3)]}
    assert metric_names.val_keys(series) == ["val-core/aime2024/acc/mean@32", "val-core/openai/gsm8k/acc/mean@1"]
    assert metric_names.VAL_KEY.match("val-core/openai/gsm8k/acc/mean@1")["source"] == "openai/gsm8k"


def test_ema_is_debiased_and_smooths():
    assert charts.ema([5.0, 5.0, 5.0], 0.9) == pytest.approx([5.0, 5.0, 5.0])
    sm = charts.ema([0.0, 1.0] * 20, 0.8)
    assert max(sm[10:]) - min(sm[10:]) < 0.3
    assert charts.ema([1.0, 2.0], 0.0) == [1.0, 2.0]


def test_report_demo_run(tmp_path):
    run = tmp_path / "tiny-demo"
    logged = write_demo_run(run)
    res = report.make_report(run)
    out = run / "report"
    names = sorted(Path(p).name for p in res["charts"])
    assert names == sorted(["reward.png", "val_accuracy.png", "response_length.png", "clipfrac_kl.png",
                            "grad_norm.png", "step_time.png", "eval_accuracy.png"])
    for p in res["charts"]:
        data = Path(p).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    assert not list(out.glob(".*tmp*"))
    summary = (out / "summary.md").read_text()
    for _, name in [(0, n) for n in names]:
        assert f"]({name})" in summary
    final = {r["key"]: r for r in res["final"]}
    assert final["critic/score/mean"]["final"] == pytest.approx(logged[60]["critic/score/mean"])
    assert final["critic/score/mean"]["final_step"] == 60
    assert f"| training reward (critic/score/mean) | {report_summary.fmt(logged[60]['critic/score/mean'])} | 60 |" in summary
    assert final["val-core/arith/acc/mean@1"]["final"] == pytest.approx(logged[60]["val-core/arith/acc/mean@1"])
    evals = res["evals"]
    assert [e["step"] for e in evals] == [20, 40, 60]
    e60 = json.loads((run / "eval" / "arith-60" / "results.json").read_text())
    assert f"| arith | 60 | 4 | {100 * e60['accuracy']:.1f}% ± {100 * e60['metrics']['avg@4_stderr']:.1f} |" in summary
    assert "preset `tiny`" in summary and res["missing"] == []
    assert metric_names.val_keys(read_series(run / "metrics.jsonl")) == ["val-core/arith/acc/mean@1"]


def test_report_missing_series_listed_not_drawn(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(
        json.dumps({"step": s, "data": {"critic/score/mean": s / 10}}) + "\n" for s in range(1, 4)))
    res = report.make_report(run, tmp_path / "out")
    assert [Path(p).name for p in res["charts"]] == ["reward.png"]
    assert "gradient norm" in res["missing"] and "eval accuracy per checkpoint" in res["missing"]
    assert "## Not charted" in (tmp_path / "out" / "summary.md").read_text()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError):
        report.make_report(empty)


def test_moe_routing_chart_only_for_runs_with_routing_metrics(tmp_path):
    """A run with the native engine's MoE routing metrics gets routing.png; a dense run neither draws it nor
    lists it as not charted (test_report_demo_run: nothing missing)."""
    run = tmp_path / "moe"
    run.mkdir()
    rows = [{"critic/score/mean": s / 10, "moe/routing_flip_frac": 0.03 - s / 1000, "moe/routing_flip_frac_update": 0.02,
             "moe/router_gap_share": 0.1, "rollout/moe/max_vio/avg": 1.5, "moe/load_cv": 1.2} for s in range(1, 21)]
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": d}) + "\n"
                                                for s, d in enumerate(rows, start=1)))
    res = report.make_report(run, tmp_path / "out")
    assert "routing.png" in [Path(p).name for p in res["charts"]]
    assert (tmp_path / "out" / "routing.png").read_bytes().startswith(PNG_MAGIC)
    assert "moe routing" not in res["missing"]
    dense = tmp_path / "dense"
    dense.mkdir()
    (dense / "metrics.jsonl").write_text(json.dumps({"step": 1, "data": {"critic/score/mean": 0.1}}) + "\n")
    res = report.make_report(dense, tmp_path / "out2")
    assert "routing.png" not in [Path(p).name for p in res["charts"]] and "moe routing" not in res["missing"]


def test_report_cli_json_by_run_name(tmp_path):
    home = tmp_path / "home"
    write_demo_run(home / "runs" / "tiny-demo", steps=12)
    env = {**os.environ, "GSPO_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "gspo_cli", "report", "tiny-demo", "--json"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert Path(res["summary"]).is_file() and len(res["charts"]) == 7
    proc = subprocess.run([sys.executable, "-m", "gspo_cli", "report", "nope"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and "no run 'nope'" in proc.stderr and "Traceback" not in proc.stderr


def test_compare_two_runs_overlays_and_tables_side_by_side(tmp_path):
    a, b = tmp_path / "gspo-run", tmp_path / "grpo-run"
    write_demo_run(a, steps=40, seed=1)
    write_demo_run(b, steps=30, seed=2)
    (a / "config.yaml").write_text("name: tiny\ntrainer:\n  engine: native\nalgorithm:\n  loss_mode: gspo\n")
    (b / "config.yaml").write_text("name: tiny\ntrainer:\n  engine: native\nalgorithm:\n  loss_mode: vanilla\n")
    (b / "health.jsonl").write_text(json.dumps({"step": 12, "rule": "grad_spike", "severity": "warn",
                                                "message": "grad norm 9x its median"}) + "\nnot json\n")
    res = report.make_report([a, b], tmp_path / "cmp")
    assert len(res["charts"]) == 7 and res["missing"] == []
    assert res["differing"] == ["algorithm.loss_mode"]
    assert res["labels"] == {"gspo-run": "gspo-run (loss_mode=gspo)", "grpo-run": "grpo-run (loss_mode=vanilla)"}
    text = (tmp_path / "cmp" / "summary.md").read_text()
    assert "# Compare 2 runs: gspo-run, grpo-run" in text
    assert "| `algorithm.loss_mode` | gspo | vanilla |" in text
    assert "| steps logged | 40 | 30 |" in text
    assert "| grpo-run | 12 | warn | grad_spike | grad norm 9x its median |" in text
    e_a = json.loads((a / "eval" / "arith-60" / "results.json").read_text())
    assert f"| eval arith: latest checkpoint | {100 * e_a['accuracy']:.1f}% @ 60 |" in text
    assert res["table"]["validation accuracy: best"]["gspo-run"].endswith("%")


def test_compare_cli_default_folder_and_too_many(tmp_path):
    home = tmp_path / "home"
    for name in ("r1", "r2"):
        write_demo_run(home / "runs" / name, steps=12)
    env = {**os.environ, "GSPO_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "gspo_cli", "report", "r1", "r2", "--json"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert Path(res["out"]) == home / "reports" / "compare-r1-vs-r2"
    with pytest.raises(Exception, match="readable up to"):
        report.make_report([home / "runs" / "r1"] * 9)


def test_report_and_runs_show_flag_a_metrics_file_two_jobs_wrote(tmp_path):
    """Duplicated / out-of-order steps (two writers) are named, in `gspo report` and `gspo runs show`."""
    home = tmp_path / "home"
    run = home / "runs" / "twice"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("name: tiny\nmodel:\n  path: builtin:tiny\ntrainer:\n  engine: native\n")
    steps = [1, 2, 3, 4, 1, 2, 5, 3, 6, 8, 7]  # a second job started at step 1 while the first was at step 4
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": {"critic/score/mean": s / 10}}) + "\n"
                                               for s in steps))
    env = {**os.environ, "GSPO_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "gspo_cli", "report", "twice", "--json"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    expected = "3 duplicated step(s) (first 1), 1 out-of-order step(s) (first 7)"
    assert json.loads(proc.stdout)["warnings"] == [
        f"twice: metrics.jsonl has {expected}: two jobs wrote this run; each chart keeps the last line per step, "
        "so curves may mix both jobs"]
    assert f"**Warning:** twice: metrics.jsonl has {expected}" in (run / "report" / "summary.md").read_text()
    proc = subprocess.run([sys.executable, "-m", "gspo_cli", "runs", "show", "twice"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0 and f"{expected} in metrics.jsonl: two jobs wrote" in proc.stdout


def test_short_runs_get_whole_step_ticks_and_compare_legends_no_plus_more(tmp_path, monkeypatch):
    """Issue #33: a 4-step run's charts put ticks at 1.5 and 2.5; compare legends said '+29 more' in every label.
    Steps are whole numbers on every chart; the labels name the first differing settings and one line under the
    legend says how many more differ (summary.md lists them all)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from gspo_cli.report.data import label_runs, load_run, more_settings_note

    a, b = tmp_path / "a", tmp_path / "b"
    write_demo_run(a, steps=4, seed=1)
    write_demo_run(b, steps=4, seed=2)
    keys = {f"k{i}": i for i in range(6)}
    (a / "config.yaml").write_text("name: tiny\nalgorithm:\n  loss_mode: gspo\nextra:\n"
                                   + "".join(f"  {k}: {v}\n" for k, v in keys.items()))
    (b / "config.yaml").write_text("name: tiny\nalgorithm:\n  loss_mode: vanilla\nextra:\n"
                                   + "".join(f"  {k}: {v + 1}\n" for k, v in keys.items()))
    ticks: list[list[float]] = []
    saved = plt.Figure.savefig

    def keep_ticks(fig, *args, **kwargs):
        for ax in fig.axes:
            lo, hi = ax.get_xlim()
            ticks.append([t for t in ax.get_xticks() if lo <= t <= hi])
        return saved(fig, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", keep_ticks)
    report.make_report([a], tmp_path / "one")
    assert ticks and all(t == int(t) for axis in ticks for t in axis), ticks
    assert any(len(axis) >= 3 for axis in ticks)
    runs = [load_run(a), load_run(b)]
    assert len(label_runs(runs)) == 7
    assert all("more" not in r.label for r in runs) and "loss_mode=gspo" in runs[0].label
    assert more_settings_note(runs) == ("4 more settings differ between these runs than the labels name: "
                                        "summary.md lists every one")
    report.make_report([a, b], tmp_path / "cmp")
    assert "extra.k5" in (tmp_path / "cmp" / "summary.md").read_text()  # every differing key is in summary.md

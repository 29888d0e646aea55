"""Two `gspo train` commands on one run name, at once, on a real local Ray head: one refuses with one line (the
job, how to follow it, how to stop it), the other trains; metrics.jsonl holds every step once, in order."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from native_helpers import ROOT

from gspo_cli.metrics import jsonl


def _start(args: list[str], home) -> subprocess.Popen:
    env = {**os.environ, "GSPO_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-m", "gspo_cli", *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.ray
@pytest.mark.timeout(1500)  # two CLIs, a training job and a third CLI on a real head
def test_two_trains_on_one_run_one_refuses_and_metrics_hold_every_step_once(workspace, ray_head):
    sets = sum((["--set", s] for s in workspace["sets"]), [])
    args = ["train", "--preset", "tiny", "--run-name", "twice", "--address", ray_head.dashboard_url, *sets]
    procs = [_start(args, workspace["home"]) for _ in range(2)]
    results = [(p.wait(timeout=600), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 3], [(c, e[-2000:]) for c, _, e in results]
    refused = next(err for code, _, err in results if code == 3)
    assert "Error: run twice is being trained by job twice-train-" in refused, refused
    assert "gspo jobs logs twice-train-" in refused and "gspo jobs stop twice-train-" in refused
    assert "Traceback" not in refused
    run = workspace["runs"] / "twice"
    steps = [r["step"] for r in jsonl.read_metrics(run / "metrics.jsonl")]
    print(f"refused:\n{refused}\nmetrics.jsonl steps: {steps}")  # the closing note's evidence (pytest -s)
    assert steps == sorted(set(steps)) and steps[-1] == 4, steps
    assert jsonl.describe_order_problems(jsonl.order_problems(run / "metrics.jsonl")) is None
    assert not (run / "run.lock").exists()  # released by the job when it ended
    # jobs are named by their run, and `jobs list --json` says which run each one wrote
    listed = subprocess.run([sys.executable, "-m", "gspo_cli", "jobs", "list", "--json", "--address",
                             ray_head.dashboard_url], capture_output=True, text=True, cwd=ROOT, timeout=120)
    mine = [r for r in json.loads(listed.stdout) if r["run"] == "twice"]
    # the loser is refused by the CLI before submitting, or (when both CLIs submit within the same instant) by its
    # job before it writes anything: then it shows as a failed job of the run, never as a second writer
    assert all(r["job_id"].startswith("twice-train-") for r in mine)
    assert sorted(r["status"] for r in mine) in (["SUCCEEDED"], ["FAILED", "SUCCEEDED"]), mine
    # a third train after the first ended: the run is complete, nothing to refuse or train
    again = _start(args, workspace["home"])
    assert again.wait(timeout=300) == 0 and "already complete" in again.communicate()[1]

"""Run health on real native training jobs on the local Ray head, with faults injected by GSPO_FAULT:
crash -> restart -> finish (every step once), hang -> stall stopped -> restart, NaN with action stop -> job fails
naming the rule, and a slowed trainer raising the throughput rule."""

from __future__ import annotations

import json

import pytest

from gspo_cli.metrics.health import read_events
from gspo_cli.metrics.jsonl import read_metrics

pytestmark = pytest.mark.ray

FAST = ["data.train_batch_size=4", "actor.ppo_mini_batch_size=4", "rollout.n=4", "trainer.test_freq=-1",
        "trainer.val_before_train=false", "trainer.save_freq=2", "actor.lr_warmup_steps=1",
        "trainer.restart.backoff_base_s=0.5", "trainer.restart.kill_grace_s=2", "trainer.health.warmup_steps=0"]


def _train(gspo, ray_head, workspace, name, fault, steps, *sets):
    args = ["train", "--preset", "tiny", "--address", ray_head.dashboard_url, "--run-name", name]
    for item in [*workspace["sets"], *FAST, f"trainer.total_training_steps={steps}", *sets]:
        args += ["--set", item]
    proc = gspo(*args, env={"GSPO_FAULT": fault, "GSPO_FAULTS_TO_JOBS": "1", "GSPO_HOME": str(workspace["home"])},
                timeout=400)
    return proc, workspace["runs"] / name


def test_crash_restarts_from_the_checkpoint_and_finishes_with_every_step_once(gspo, ray_head, workspace):
    # slow@6: from step 6 on each step takes 4 s instead of 1 s on the trainer's step clock (simulated, so the
    # machine's load cannot move the baseline): the median of the newest 3 steps is slow from step 7: one warning there.
    proc, run = _train(gspo, ray_head, workspace, "crashy", "crash@4,slow@6", 9,
                       "trainer.health.throughput.min_history=3", "trainer.health.throughput.patience=1",
                       "trainer.health.throughput.max_drop=0.5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == list(range(1, 10))
    records = read_events(run / "health.jsonl")
    restart = next(r for r in records if r["rule"] == "restart")
    assert restart["cause"] == "killed by signal SIGKILL" and restart["resume_step"] == 2 and restart["step"] == 3
    assert "GSPO_FAULT crash@4: killing this process with SIGKILL" in restart["excerpt"][-1]
    slow = [r for r in records if r["rule"] == "throughput"]
    assert [(r["step"], r["action"]) for r in slow] == [(7, "warn")]
    assert "health restart at step 3: attempt 1 failed (killed by signal SIGKILL)" in proc.stderr
    assert "health warn throughput at step" in proc.stderr


def test_hang_is_detected_as_a_stall_stopped_and_restarted(gspo, ray_head, workspace):
    proc, run = _train(gspo, ray_head, workspace, "hung", "hang@4", 5, "trainer.health.stall.floor_s=5",
                       "trainer.health.stall.startup_s=300")
    assert proc.returncode == 0, proc.stderr[-3000:]
    stall, restart = [r for r in read_events(run / "health.jsonl") if r["rule"] in ("stall", "restart")]
    assert stall["action"] == "stop" and stall["step"] == 3 and stall["value"] > stall["threshold"] >= 5
    print(f"stall detected {stall['late_by_s']}s after its {stall['threshold']}s limit")
    assert restart["cause"].startswith("stalled") and restart["resume_step"] == 2
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [1, 2, 3, 4, 5]


def test_nan_with_action_stop_fails_the_job_naming_the_rule(gspo, ray_head, workspace):
    proc, run = _train(gspo, ray_head, workspace, "nan", "nan@2", 4)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "native trainer stopped: health rule nonfinite (action stop) at step 2: actor/pg_loss is NaN" in proc.stderr
    assert "Traceback" not in proc.stderr
    (event,) = read_events(run / "health.jsonl")
    assert event["rule"] == "nonfinite" and event["severity"] == "error" and event["value"] is None
    metrics = read_metrics(run / "metrics.jsonl")
    assert metrics[-1]["step"] == 2 and metrics[-1]["data"]["actor/pg_loss"] is None
    assert json.dumps(event)  # plain JSON, no NaN token

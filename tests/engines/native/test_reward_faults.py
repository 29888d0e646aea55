"""A reward exception injected in a real tiny native training run (GSPO_REWARD_FAULT, issue #22): the step's
metrics count it (reward/errors), the health rule warns at the first one, and above the preset's rate the run is
stopped naming the rule. The fault is injected in the reward layer (gspo_cli/rewards/guard.py), not the trainer."""

from __future__ import annotations

import pytest

from gspo_cli.metrics.health import read_events
from gspo_cli.metrics.jsonl import read_metrics

pytestmark = pytest.mark.ray

FAST = ["data.train_batch_size=4", "actor.ppo_mini_batch_size=4", "rollout.n=4", "trainer.test_freq=-1",
        "trainer.val_before_train=false", "trainer.save_freq=-1", "actor.lr_warmup_steps=1",
        "trainer.max_restarts=0"]


def _train(gspo, ray_head, workspace, name, fault, steps, *sets):
    args = ["train", "--preset", "tiny", "--address", ray_head.dashboard_url, "--run-name", name]
    for item in [*workspace["sets"], *FAST, f"trainer.total_training_steps={steps}", *sets]:
        args += ["--set", item]
    proc = gspo(*args, env={"GSPO_REWARD_FAULT": fault, "GSPO_FAULTS_TO_JOBS": "1",
                            "GSPO_HOME": str(workspace["home"])}, timeout=400)
    return proc, workspace["runs"] / name


def test_reward_errors_are_counted_warned_and_stop_the_run_above_the_rate(gspo, ray_head, workspace):
    # 1 response in 8 raises: 2 of each step's 16 (12.5%). Rate limit 50%: the run goes on, warned once.
    proc, run = _train(gspo, ray_head, workspace, "rewardwarn", "error:8", 3,
                       "trainer.health.reward_error_rate.max_rate=0.5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = read_metrics(run / "metrics.jsonl")
    assert [(s["data"]["reward/errors"], s["data"]["reward/scored"]) for s in steps] == [(2.0, 16.0)] * 3
    assert all(s["data"]["reward/timeouts"] == 0.0 for s in steps)
    (event,) = read_events(run / "health.jsonl")
    assert (event["rule"], event["action"], event["step"], event["value"]) == ("reward_errors", "warn", 1, 2.0)
    assert "health warn reward_errors at step 1: the verifier failed on 2 response(s)" in proc.stderr
    assert "gspo reward error: RuntimeError: GSPO_REWARD_FAULT" in proc.stderr  # the first one, in the job log
    print(proc.stderr[-1500:])

    # The default rate limit (5%): the same fault stops the run at step 1, naming the rule.
    proc, run = _train(gspo, ray_head, workspace, "rewardstop", "error:8", 3)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "health rule reward_error_rate (action stop) at step 1: 12% of this step's responses" in proc.stderr
    assert "Traceback" not in proc.stderr
    rules = [(e["rule"], e["action"]) for e in read_events(run / "health.jsonl")]
    assert ("reward_errors", "warn") in rules and ("reward_error_rate", "stop") in rules
    print(proc.stderr[-1500:])

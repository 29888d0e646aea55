"""SIGKILL the real training job after a checkpoint, resume it, and check the run continues with intact metrics."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from native_helpers import PY, ROOT, quick_preset

from gspo_cli.engines import TrainRequest
from gspo_cli.engines.native.launch import JOB_COMMAND, entry_args, prepare_run
from gspo_cli.engines.native.trainer import train
from gspo_cli.jobs import events
from gspo_cli.layout import list_steps
from gspo_cli.metrics.jsonl import read_metrics

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow

STEPS = 12
SETS = [f"trainer.total_training_steps={STEPS}", "trainer.save_freq=2", "trainer.test_freq=4",
        "trainer.max_ckpt_to_keep=2", "data.train_batch_size=8", "actor.ppo_mini_batch_size=4", "rollout.n=8"]
VOLATILE = ("timing_s/", "perf/")


def _curve(run_dir):
    return [(r["step"], {k: v for k, v in r["data"].items() if not k.startswith(VOLATILE)})
            for r in read_metrics(run_dir / "metrics.jsonl")]


def test_sigkill_after_a_checkpoint_then_resume(workspace):
    preset = quick_preset(workspace["sets"], SETS)
    run_dir = prepare_run(TrainRequest(preset=preset, preset_ref="tiny", run_name="killed"))
    env = {**os.environ, "GSPO_HOME": str(workspace["home"])}
    proc = subprocess.Popen([PY, "-m", "gspo_cli.job_kinds", JOB_COMMAND, *entry_args(run_dir)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not list_steps(run_dir) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]  # killed mid-run, not finished
    at_kill = list_steps(run_dir)
    assert at_kill and at_kill[-1] < STEPS
    lines_at_kill = [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")] if (
        run_dir / "metrics.jsonl").exists() else []
    print(f"killed with checkpoints {at_kill}, metric steps {lines_at_kill}", file=sys.stderr)

    seen: list[dict] = []
    previous = events.set_sink(seen.append)
    try:
        assert train(preset, run_dir) == 0  # resume_mode auto, same run folder
    finally:
        events.set_sink(previous)
    resumed_from = at_kill[-1]
    assert any(e["kind"] == "message" and f"(step {resumed_from})" in e["text"] for e in seen)
    assert [e["step"] for e in seen if e["kind"] == "progress"] == list(range(resumed_from + 1, STEPS + 1))
    steps = [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")]
    assert steps == list(range(0, STEPS + 1))  # step 0 = validation before training; none lost, none twice
    assert list_steps(run_dir) == [STEPS - 2, STEPS]
    assert not [p for p in (run_dir / "checkpoints").iterdir() if p.name.startswith(".")]

    # The interrupted-and-resumed run is the same run as an uninterrupted one.
    ref = workspace["runs"] / "reference"
    previous = events.set_sink(lambda e: None)
    try:
        train(preset, ref)
    finally:
        events.set_sink(previous)
    assert _curve(run_dir) == _curve(ref)


def test_kills_at_random_moments_never_break_the_run(workspace):
    """Kill the job at several random moments (mid-step, mid-save, mid-prune...), resume each time: every
    complete-looking checkpoint loads, and the final run equals an uninterrupted one."""
    import random

    from gspo_cli.engines.native import checkpoint
    from gspo_cli.models.loading import load_model

    preset = quick_preset(workspace["sets"], SETS + ["trainer.save_freq=1", "trainer.max_ckpt_to_keep=1"])
    run_dir = prepare_run(TrainRequest(preset=preset, preset_ref="tiny", run_name="torture"))
    env = {**os.environ, "GSPO_HOME": str(workspace["home"])}
    rng = random.Random(0)
    kills = 0
    for _ in range(3):
        proc = subprocess.Popen([PY, "-m", "gspo_cli.job_kinds", JOB_COMMAND, *entry_args(run_dir)], cwd=ROOT,
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            start = list_steps(run_dir)
            deadline = time.monotonic() + 300
            while list_steps(run_dir) == start and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)  # wait until this round trains at least one step...
            time.sleep(rng.uniform(0.0, 0.3))  # ...then kill at a random moment
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        kills += proc.returncode == -signal.SIGKILL
        for step in list_steps(run_dir):  # whatever is named global_step_N loads
            path = checkpoint.step_dir(run_dir, step)
            load_model(str(path))
            assert checkpoint.load_state(path)["step"] == step
    assert kills >= 1
    previous = events.set_sink(lambda e: None)
    try:
        train(preset, run_dir)
        train(preset, workspace["runs"] / "torture-ref")
    finally:
        events.set_sink(previous)
    assert [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")] == list(range(0, STEPS + 1))
    assert _curve(run_dir) == _curve(workspace["runs"] / "torture-ref")

"""verl's real trainer through gspo on CPU: `gspo train --preset tiny-verl` runs verl.trainer.main_ppo (FSDP2 actor,
vLLM-CPU rollout with verl's weight sync every step, gspo's reward, GSPO loss) as a Ray job on the embedded head
under gspo's job wrapper. What they check is verl's own output: its file logger's metrics.jsonl, its
checkpoint layout, its resume, and the wrapper's restart after a verl worker is killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT, gspo

from gspo_cli import layout
from gspo_cli.metrics.jsonl import read_metrics

pytestmark = [pytest.mark.engine, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(2400)]

# verl's GSPO loss and timing keys (verl/trainer/ppo/metric_utils.py, verl/workers/actor): they come from verl.
VERL_KEYS = ("actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/grad_norm", "critic/score/mean",
             "response_length/mean", "timing_s/gen", "timing_s/update_actor", "timing_s/update_weights",
             "timing_s/step")


def _steps(run_dir) -> list[int]:
    return [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")]


def _start(run: str, *sets: str) -> subprocess.Popen:
    argv = [sys.executable, "-m", "gspo_cli", "train", "--preset", "tiny-verl", "--run-name", run]
    for s in sets:
        argv += ["--set", s]
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ))


def _wait_for(pred, proc: subprocess.Popen, timeout: float = 1500) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if proc.poll() is not None:
            raise AssertionError(f"gspo train ended early ({proc.returncode}):\n{proc.stdout.read()[-4000:]}")
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(1)


def _job_pids(run_dir) -> list[int]:
    """The job wrapper process of this run (`gspo_cli.job_kinds verl-train <run>/verl_job.json`) on this host."""
    spec = str(run_dir / "verl_job.json")
    out = subprocess.run(["pgrep", "-f", f"gspo_cli.job_kinds verl-train {spec}"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _wait_for_gone(pids: list[int], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while any(os.path.exists(f"/proc/{p}") for p in pids):
        assert time.monotonic() < deadline, f"still alive after SIGKILL: {pids}"
        time.sleep(0.5)


def _verl_worker_pid() -> int:
    """verl's FSDP actor worker (Ray actor WorkerDict / ...ActorRolloutRef...) of the embedded head's job."""
    from ray.util.state import list_actors

    from gspo_cli.jobs import auth, local_head

    head = local_head.running()
    auth.use_in_process(auth.TOKEN, head.token_file)
    # this test's head by its address: other Ray instances may run on the host
    actors = list_actors(address=head.address, filters=[("state", "=", "ALIVE")], limit=1000)
    pids = [a.pid for a in actors if "WorkerDict" in (a.class_name or "")]
    assert pids, [a.class_name for a in actors]
    return pids[0]


def test_gspo_steps_on_verl_with_vllm_cpu(verl_home):
    """(1) A few GSPO steps: metrics.jsonl is verl's file logger's, read by report / runs list / health."""
    run = "verl-steps"
    res = gspo("train", "--preset", "tiny-verl", "--run-name", run, "--set", "trainer.total_training_steps=3",
               "--set", "trainer.save_freq=3")
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    run_dir = layout.run_dir(run)
    records = read_metrics(run_dir / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2, 3]
    for r in records:
        missing = [k for k in VERL_KEYS if k not in r["data"]]
        assert not missing, missing
    ckpt = run_dir / "checkpoints" / "global_step_3"
    assert (ckpt / "actor").is_dir() and (run_dir / "checkpoints" / "latest_checkpointed_iteration.txt").is_file()
    assert (ckpt / "actor" / "fsdp_config.json").is_file()  # verl's mark of an FSDP checkpoint
    rep = gspo("report", run)
    assert rep.returncode == 0, rep.stderr[-3000:]
    runs = gspo("runs", "list", "--json")
    assert runs.returncode == 0, runs.stderr[-2000:]
    assert run in runs.stdout
    summary = {k: [r["data"][k] for r in records] for k in ("critic/score/mean", "timing_s/step", "timing_s/gen",
                                                              "timing_s/update_actor", "timing_s/update_weights")}
    print("\nverl GSPO on CPU:", json.dumps(summary))


def test_worker_killed_is_restarted_then_kill9_and_resume(verl_home):
    """(3) a verl worker killed mid-run: the wrapper restarts verl from the last checkpoint; (2) then the whole job
    killed with SIGKILL: `gspo train --resume` continues; every step is in metrics.jsonl exactly once."""
    run, total = "verl-faults", 20
    proc = _start(run, f"trainer.total_training_steps={total}", "trainer.save_freq=2")
    run_dir = layout.run_dir(run)
    health = run_dir / "health.jsonl"
    try:
        _wait_for(lambda: 2 in layout.list_steps(run_dir) and 3 in _steps(run_dir), proc)
        os.kill(_verl_worker_pid(), signal.SIGKILL)  # transient: the wrapper restarts from the last checkpoint
        _wait_for(lambda: health.is_file() and '"rule": "restart"' in health.read_text(), proc)
        restarted_at = layout.list_steps(run_dir)[-1]
        _wait_for(lambda: layout.list_steps(run_dir)[-1] > restarted_at, proc)  # the restarted verl saves again
        pids = _job_pids(run_dir)
        assert pids
        for pid in pids:  # the job wrapper and verl's driver under it, as a host crash would
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        proc.kill()  # the `gspo train` follower only streams the job's log
        _wait_for_gone(pids)
    finally:
        if proc.poll() is None:
            proc.kill()
    print("\nrestart record:", health.read_text().splitlines()[0][:400])
    killed_at = layout.list_steps(run_dir)[-1]
    assert killed_at < total
    res = gspo("train", "--resume", run)
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    assert f"global_step_{killed_at}" in res.stderr + res.stdout
    assert _steps(run_dir) == list(range(1, total + 1))  # none lost, none twice
    assert layout.list_steps(run_dir)[-1] == total
    print(f"worker killed, restarted from global_step_{restarted_at}; job SIGKILLed at global_step_{killed_at}; "
          f"resumed to {total}; metrics steps {_steps(run_dir)}")

"""verl's real trainer through gspo on CPU: `gspo train --preset tiny-verl` runs verl.trainer.main_ppo (FSDP2 actor,
vLLM-CPU rollout with verl's weight sync every step, gspo's reward, GSPO loss) as a Ray job on the embedded head
under gspo's job wrapper. What they check is verl's own output: its file logger's metrics.jsonl, its
checkpoint layout, its resume, and the wrapper's restart after a verl worker is killed.

One run serves every check (a verl start-up, Ray workers plus the vLLM-CPU server, costs minutes on a busy 2-core
machine; the steps themselves take seconds): it is started, a verl worker is killed (the wrapper restarts verl from
the last checkpoint: the second start), the whole job is killed with SIGKILL, and `gspo train --resume` finishes it
(the third start). The tests below then read what that run left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, gspo

from gspo_cli import layout
from gspo_cli.metrics.jsonl import read_metrics

pytestmark = [pytest.mark.engine, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(3600)]

RUN, TOTAL = "verl-e2e", 16
# verl's GSPO loss and timing keys (verl/trainer/ppo/metric_utils.py, verl/workers/actor): they come from verl.
VERL_KEYS = ("actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/grad_norm", "critic/score/mean",
             "response_length/mean", "timing_s/gen", "timing_s/update_actor", "timing_s/update_weights",
             "timing_s/step")


@dataclass
class Story:
    """What the faulted run went through, for the tests to check."""
    home: Path
    run_dir: Path
    steps_first_job: list[int]  # metrics steps written before the worker was killed
    restarted_at: int  # checkpoint the wrapper restarted verl from
    killed_at: int  # last complete checkpoint when the whole job was SIGKILLed
    resume: subprocess.CompletedProcess

    def gspo(self, *args: str) -> subprocess.CompletedProcess:
        return gspo(*args, timeout=600, env={"GSPO_HOME": str(self.home)})


def _steps(run_dir: Path) -> list[int]:
    return [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")]


def _wait_for(pred, proc: subprocess.Popen, log: Path, what: str, timeout: float = 2400) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if proc.poll() is not None:
            raise AssertionError(f"gspo train ended early ({proc.returncode}) waiting for {what}:\n"
                                 f"{log.read_text(errors='replace')[-4000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(1)


def _job_pids(run_dir: Path) -> list[int]:
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
    """verl's FSDP actor worker (Ray actor WorkerDict / ...ActorRolloutRef...) of the embedded head's job, as a
    user finds it: `gspo cluster status --actors` (the head's state API over its dashboard). Not
    ray.util.state with the GCS address in this process: that leaves a GCS client behind which ends the whole
    pytest process (exit 1, no report) a minute after the head it knew stops."""
    res = gspo("cluster", "status", "--actors", "--json", timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    actors = json.loads(res.stdout)["actors"]
    pids = [a["pid"] for a in actors if "WorkerDict" in a["class"]]
    assert pids, [a["class"] for a in actors]
    return pids[0]


def _faulted_run(home: Path) -> Story:
    """Start the run, kill a verl worker once it has a checkpoint, wait for the wrapper's restart and a checkpoint
    of the restarted verl, SIGKILL the whole job, then `gspo train --resume` it to the end."""
    res = gspo("prepare-data", "--preset", "tiny-verl", timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    run_dir = layout.run_dir(RUN)
    health = run_dir / "health.jsonl"
    argv = [sys.executable, "-m", "gspo_cli", "train", "--preset", "tiny-verl", "--run-name", RUN,
            "--set", f"trainer.total_training_steps={TOTAL}", "--set", "trainer.save_freq=2"]
    # the follower streams verl's whole log: into a file, as a pipe nobody reads fills up and blocks it
    log = home.parent / "gspo-train.log"
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ))
    try:
        _wait_for(lambda: 2 in layout.list_steps(run_dir) and 3 in _steps(run_dir), proc, log, "step 3")
        first = _steps(run_dir)
        os.kill(_verl_worker_pid(), signal.SIGKILL)  # transient: the wrapper restarts from the last checkpoint
        _wait_for(lambda: health.is_file() and '"rule": "restart"' in health.read_text(), proc, log, "the restart")
        restarted_at = layout.list_steps(run_dir)[-1]
        # the restarted verl saves again
        _wait_for(lambda: layout.list_steps(run_dir)[-1] > restarted_at, proc, log, "a checkpoint after the restart")
        pids = _job_pids(run_dir)
        assert pids
        for pid in pids:  # the job wrapper and verl's driver under it, as a host crash would
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        proc.kill()  # the `gspo train` follower only streams the job's log
        _wait_for_gone(pids)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    killed_at = layout.list_steps(run_dir)[-1]
    resume = gspo("train", "--resume", RUN, timeout=2400)
    return Story(home, run_dir, first, restarted_at, killed_at, resume)


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    """The one faulted verl run of this module, in its own $GSPO_HOME; its embedded Ray head is stopped after."""
    home = tmp_path_factory.mktemp("verl") / "gspo-home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GSPO_HOME", str(home))
        mp.delenv("RAY_ADDRESS", raising=False)
        try:
            result = _faulted_run(home)
            print(f"\nverl run: first job steps {result.steps_first_job}; worker killed, restarted from "
                  f"global_step_{result.restarted_at}; job SIGKILLed at global_step_{result.killed_at}; "
                  f"resumed to {TOTAL}")
            yield result
        finally:
            gspo("cluster", "down", timeout=300)


def test_steps_and_metrics_are_verls(story):
    """(1) GSPO steps complete; metrics.jsonl is verl's file logger's (verl's GSPO loss and timing keys), and
    `gspo report`, `runs list` / `runs show` (with the health events) read it."""
    assert story.resume.returncode == 0, (story.resume.stdout + story.resume.stderr)[-6000:]
    records = read_metrics(story.run_dir / "metrics.jsonl")
    for r in records:
        missing = [k for k in VERL_KEYS if k not in r["data"]]
        assert not missing, (r["step"], missing)
    rep = story.gspo("report", RUN)
    assert rep.returncode == 0, rep.stderr[-3000:]
    runs = story.gspo("runs", "list", "--json")
    assert runs.returncode == 0, runs.stderr[-2000:]
    assert RUN in runs.stdout
    show = story.gspo("runs", "show", RUN, "--json")
    assert show.returncode == 0, show.stderr[-2000:]
    info = json.loads(show.stdout)
    assert info["steps_done"] == TOTAL, info["steps_done"]
    assert any(h.get("rule") == "restart" for h in info["health_events"]), info["health_events"]
    summary = {k: [r["data"][k] for r in records] for k in ("critic/score/mean", "timing_s/step", "timing_s/gen",
                                                              "timing_s/update_actor", "timing_s/update_weights")}
    print("\nverl GSPO on CPU:", json.dumps(summary))


def test_checkpoints_in_verls_layout(story):
    """(2) checkpoints as verl writes them: global_step_N/actor with verl's FSDP mark and verl's tracker file."""
    ckpts = story.run_dir / "checkpoints"
    assert (ckpts / "latest_checkpointed_iteration.txt").read_text().strip() == str(TOTAL)
    last = ckpts / f"global_step_{TOTAL}" / "actor"
    assert last.is_dir() and (last / "fsdp_config.json").is_file()  # verl's mark of an FSDP checkpoint
    assert layout.list_steps(story.run_dir)[-1] == TOTAL


def test_killed_worker_is_restarted_from_the_last_checkpoint(story):
    """(3) a verl worker killed mid-run: the wrapper's health.jsonl records the failure and a restart from the
    last checkpoint, and the restarted verl went on from there."""
    events = [json.loads(x) for x in (story.run_dir / "health.jsonl").read_text().splitlines() if x.strip()]
    restarts = [e for e in events if e.get("rule") == "restart"]
    assert restarts, events
    print("\nrestart record:", json.dumps(restarts[0])[:400])
    assert f"global_step_{story.restarted_at}" in json.dumps(restarts[0])
    assert max(story.steps_first_job) >= 3 and story.killed_at > story.restarted_at


def test_kill9_then_resume_runs_every_step_once(story):
    """(2) the whole job killed with SIGKILL mid-run: `gspo train --resume` continues from verl's last checkpoint;
    every step is in metrics.jsonl exactly once."""
    out = story.resume.stdout + story.resume.stderr
    assert story.resume.returncode == 0, out[-6000:]
    assert story.killed_at < TOTAL
    assert f"global_step_{story.killed_at}" in out
    assert _steps(story.run_dir) == list(range(1, TOTAL + 1))  # none lost, none twice
    print(f"metrics steps {_steps(story.run_dir)}")

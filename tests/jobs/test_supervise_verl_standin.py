"""The verl job wrapper (engines/verl/job.py + jobs/supervise.py) around a labelled STAND-IN for verl's main_ppo
(tests/jobs/standin_verl.py): progress from verl's metrics file, an HCCL failure restarted from the last verl
checkpoint, a hung trainer caught as a stall, stopped and restarted. No Ray needed: the wrapper is what runs
inside the Ray job, here called in-process.

No wall-clock thresholds: the wrapper's stall clock is a `StallClock` that stands still while the stand-in works
(so however loaded the machine, a normal step never looks stalled) and runs 10 s per reading while a hung
stand-in is alive (its pid in a file it writes when it hangs)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from gspo_cli import job_kinds
from gspo_cli.config.presets import load_preset
from gspo_cli.config.schema import to_jsonable
from gspo_cli.jobs import events
from gspo_cli.jobs.supervise import Supervisor
from gspo_cli.metrics.health import read_events
from gspo_cli.metrics.jsonl import read_metrics

STANDIN = Path(__file__).resolve().parent / "standin_verl.py"
HEALTH = ["trainer.restart.backoff_base_s=0.5", "trainer.restart.kill_grace_s=2", "trainer.health.stall.floor_s=2",
          "trainer.health.stall.startup_s=60"]


class StallClock:
    """Monotonic seconds that pass only while the hung stand-in (pid in `pidfile`) is alive: 10 s per reading."""

    def __init__(self, pidfile: Path):
        self.pidfile, self.now = pidfile, 1000.0

    def __call__(self) -> float:
        if self.pidfile.exists() and _alive(int(self.pidfile.read_text() or 0)):
            self.now += 10.0
        return self.now


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, ValueError):
        return False
    return pid > 0


@pytest.fixture(autouse=True)
def stall_clock(tmp_path, monkeypatch) -> StallClock:
    clock = StallClock(tmp_path / "hang.pid")
    monkeypatch.setattr(Supervisor, "clock", staticmethod(clock))
    return clock


def _run(tmp_path: Path, fault: str, total: int = 6, sets=(), env=None) -> tuple[int, list[dict], Path]:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    preset = load_preset("tiny", [*HEALTH, *sets])
    (run_dir / "config.yaml").write_text(yaml.safe_dump(to_jsonable(preset)))
    metrics = run_dir / "metrics.jsonl"
    spec = run_dir / "verl_job.json"
    spec.write_text(json.dumps({
        "trainer_command": [sys.executable, "-u", str(STANDIN)],
        "overrides": [f"trainer.total_training_steps={total}", "trainer.save_freq=2",
                      f"trainer.default_local_dir={run_dir / 'checkpoints'}", "trainer.resume_mode=auto"],
        "env_vars": {"VERL_FILE_LOGGER_PATH": str(metrics), "STANDIN_FAULT": fault,
                     "STANDIN_HANG_PIDFILE": str(tmp_path / "hang.pid"), **(env or {})},
        "metrics_file": str(metrics), "total_steps": total, "resume_from": None,
    }))
    seen: list[dict] = []
    previous = events.set_sink(seen.append)
    try:
        code = job_kinds.run("verl-train", [str(spec)])
    finally:
        events.set_sink(previous)
    return code, seen, run_dir


def test_hccl_failure_is_restarted_from_the_last_verl_checkpoint(tmp_path, capsys):
    code, seen, run_dir = _run(tmp_path, "hccl@4")
    assert code == 0
    # every step exactly once in metrics.jsonl, although verl's logger truncates it on each start
    assert [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")] == [1, 2, 3, 4, 5, 6]
    (restart,) = read_events(run_dir / "health.jsonl")
    assert restart["rule"] == "restart" and restart["action"] == "restart" and restart["resume_step"] == 2
    assert "HcclAllreduce" in restart["cause"] and any("EI0006" in line for line in restart["excerpt"])
    progress = [e["step"] for e in seen if e["kind"] == "progress"]
    assert progress == [1, 2, 3, 3, 4, 5, 6]  # step 3 redone after resuming from global_step_2
    assert [e for e in seen if e["kind"] == "health"][0]["attempt"] == 1
    assert "stand-in trainer (not verl): steps 3..6" in capsys.readouterr().out


def test_hung_trainer_is_caught_as_a_stall_stopped_and_restarted(tmp_path):
    code, seen, run_dir = _run(tmp_path, "hang@4")
    assert code == 0
    stall, restart = read_events(run_dir / "health.jsonl")
    assert stall["rule"] == "stall" and stall["action"] == "stop" and stall["step"] == 3
    # The limit is floor_s (2 s), or 5 x the step-2-to-3 interval when the wrapper read step 3 after the hang
    # began (then the clock had already moved); either way the stall is the hang, found once, and nothing else.
    assert stall["value"] > stall["threshold"] >= 2.0 and stall["late_by_s"] > 0
    assert restart["cause"].startswith("stalled") and restart["resume_step"] == 2
    assert [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")] == [1, 2, 3, 4, 5, 6]


def test_restart_budget_spent_fails_with_a_summary_of_every_attempt(tmp_path, capsys):
    code, seen, run_dir = _run(tmp_path, "hccl@3", sets=["trainer.max_restarts=1"], env={"STANDIN_ALWAYS": "1"})
    assert code == 1
    restart, failed = read_events(run_dir / "health.jsonl")
    assert restart["action"] == "restart" and failed["action"] == "fail" and failed["severity"] == "error"
    assert failed["message"].startswith("restart budget spent after 2 attempt(s)")
    assert len(failed["attempts"]) == 2 and failed["attempts"][1].startswith("attempt 2 (from step 2): no step")
    err = capsys.readouterr().err
    assert "attempt 1 (from the start): steps 1-2, exit code 1, transient" in err
    assert err.rstrip().splitlines()[-1].startswith("verl exited with code 1: an HCCL collective timed out")
    assert [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")] == [1, 2]

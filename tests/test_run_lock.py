"""One writer per run (gspo_cli/runs/lock.py): the lock names its job and host; a live holder is refused, a dead
one is taken over; the job adopts the lock its CLI claimed and releases it at the end."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from gspo_cli.runs import lock, state


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_claim_refuses_a_live_holder_and_takes_over_a_dead_one(tmp_path):
    run = tmp_path / "r1"
    assert lock.claim(run, "r1-train-1", engine="native") is None  # free: claimed by this CLI (pid alive)
    record = lock.read(run)
    assert record["job_id"] == "r1-train-1" and record["host"] == socket.gethostname()
    with pytest.raises(lock.RunBusyError) as exc:
        lock.claim(run, "r1-train-2", engine="native")
    assert "run r1 is being trained by job r1-train-1" in exc.value.message
    assert "gspo jobs logs r1-train-1 --follow" in exc.value.hint and "gspo jobs stop r1-train-1" in exc.value.hint
    # the job started and was SIGKILLed: its pid on this host is gone, the CLI that claimed it too
    lock._write(run, {**record, "cli_pid": _dead_pid(), "job_pid": _dead_pid(), "job_host": socket.gethostname()})
    taken = lock.claim(run, "r1-train-2", engine="native")
    assert taken["job_id"] == "r1-train-1" and lock.read(run)["job_id"] == "r1-train-2"


def test_a_live_job_process_holds_the_run_even_after_its_cli_left(tmp_path):
    run = tmp_path / "r2"
    job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "gspo-job-stand-in"])
    try:
        lock._write(run if run.mkdir() is None else run, {
            "job_id": "r2-train-1", "host": socket.gethostname(), "cli_pid": _dead_pid(), "job_pid": job.pid,
            "job_host": socket.gethostname(), "dashboard_url": "http://127.0.0.1:1"})
        with pytest.raises(lock.RunBusyError, match="being trained by job r2-train-1"):
            lock.claim(run, "r2-train-2", engine="verl")
        assert lock.live_holder(run)["job_id"] == "r2-train-1"
    finally:
        job.kill()
        job.wait()
    assert lock.live_holder(run) is None  # killed: the next train takes over
    assert lock.claim(run, "r2-train-2", engine="verl")["job_id"] == "r2-train-1"


def test_unreachable_remote_cluster_is_not_taken_for_dead(tmp_path):
    run = tmp_path / "r3"
    run.mkdir()
    lock._write(run, {"job_id": "r3-train-1", "host": "another-host", "dashboard_url": "http://127.0.0.1:1"})
    with pytest.raises(lock.RunBusyError, match="cannot be checked now") as exc:
        lock.claim(run, "r3-train-2", engine="verl")
    assert str(lock.lock_path(run)) in exc.value.hint  # how to clear it when that job is known to be gone
    # why it cannot be checked: Ray's answer, in the same line
    assert exc.value.message.endswith("which cannot be checked now (cannot reach Ray at http://127.0.0.1:1 (from "
                                      "--address): Failed to connect to Ray at address: http://127.0.0.1:1.)")
    lock._write(run, {"job_id": "r3-train-1", "host": "another-host"})  # control: no cluster named, none asked
    with pytest.raises(lock.RunBusyError) as exc:
        lock.claim(run, "r3-train-2", engine="verl")
    assert exc.value.message.endswith("(on another-host), which cannot be checked now")


def test_job_adopts_its_claim_refuses_another_and_releases_at_the_end(tmp_path, monkeypatch):
    run = tmp_path / "r4"
    monkeypatch.setenv(lock.JOB_ID_VAR, "r4-train-1")
    lock.claim(run, "r4-train-1", engine="native")

    def body() -> int:
        record = lock.read(run)
        assert record["job_pid"] and record["job_host"] == socket.gethostname()
        return 0

    assert state.run_tracked(run, "native", body) == 0
    assert lock.read(run) is None and state.read(run)["status"] == "succeeded"
    lock.claim(run, "r4-train-9", engine="native")  # another job's claim, its CLI alive (this process)
    with pytest.raises(lock.RunBusyError):
        state.run_tracked(run, "native", lambda: 0)
    assert lock.read(run)["job_id"] == "r4-train-9"
    assert json.loads(lock.lock_path(run).read_text())["engine"] == "native"


@pytest.mark.ray
def test_a_job_the_cluster_does_not_have_is_gone(tmp_path, ray_head):
    """A lock of another host naming a job its (reachable) cluster does not know: Ray's 404 (jobs/ray_errors.py
    NOT_FOUND) says the holder is gone, and the run is taken over; an unreachable cluster stays unknown (above)."""
    run = tmp_path / "r5"
    run.mkdir()
    lock._write(run, {"job_id": "r5-train-1", "host": "another-host", "dashboard_url": ray_head.dashboard_url})
    assert lock.holder_state(lock.read(run)) == "gone"
    assert lock.claim(run, "r5-train-2", engine="verl")["job_id"] == "r5-train-1"

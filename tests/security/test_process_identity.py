"""A pid in a record is acted on only while it is still the process gspo started (issue #36, finding 4).

On 1ea5a4f `gspo cluster down` (and the first `gspo train`, which stops a stale embedded head) signalled the
process group a stale `head.json` named, and the node records of `cluster up/join` the same: a pid reused after a
reboot was enough. Here the victim is an unrelated process leading its own group (`sleep` in a new session, as a
process that took the pid over would be); the records name it. gspo must leave it alone and drop the record.
Controls: a process that really is the one gspo started (same start time, same command line) is still stopped,
and a head record written by an older gspo (no identity) still stops its own `ray start`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from gspo_cli.jobs import local_head, nodes, procs

pytestmark = pytest.mark.security


@pytest.fixture
def victim():
    """Someone else's process that leads its own process group, as a recycled pid would."""
    proc = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def _alive(proc) -> bool:
    return proc.poll() is None


def _identity(pid: int) -> dict:
    """What gspo records (jobs/procs.identity), read here from /proc directly: boot id and start time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    return {"boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip(), "start_ticks": int(fields[19])}


def _head_record(pid: int, **extra) -> dict:
    home = Path(os.environ["GSPO_HOME"])
    return {"address": "127.0.0.1:1", "dashboard_url": "http://127.0.0.1:2", "pid": pid,
            "temp_dir": str(home / "ray" / "tmp" / "ray"), "log_file": str(home / "ray" / "head.log"),
            "started_at": time.time(), "token_file": str(home / "ray" / "embedded_token"), **extra}


def _write_head(record: dict) -> None:
    local_head.head_file().parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    local_head.head_file().write_text(json.dumps(record))


def test_cluster_down_leaves_a_process_that_took_the_heads_pid_alone(gspo_home, gspo_at, victim):
    _write_head(_head_record(victim.pid))  # a head.json of an older gspo: no identity, the pid reused
    proc = gspo_at("cluster", "down")
    time.sleep(0.5)
    assert _alive(victim), "gspo killed a process it did not start"
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert f"named pid {victim.pid}, which is no longer the Ray head gspo started" in proc.stderr, proc.stderr
    assert not local_head.head_file().exists()


def test_a_recorded_identity_that_does_not_match_is_not_signalled(gspo_home, gspo_at, victim):
    """A new-style record: the victim's own command line, but another start time (the pid was reused). This one
    checks the start-time comparison itself: it passes on 1ea5a4f too, whose HeadRecord could not read a record
    with `argv`/`identity` and so ignored it (the finding's reproduction is the test above)."""
    ident = _identity(victim.pid)
    _write_head(_head_record(victim.pid, argv=["sleep", "600"],
                             identity={**ident, "start_ticks": ident["start_ticks"] - 1}))
    proc = gspo_at("cluster", "down")
    time.sleep(0.5)
    assert _alive(victim) and proc.returncode == 0


def test_the_first_train_stops_no_stranger_either(gspo_home, victim, monkeypatch):
    """`local_head.start` (what `gspo train` runs first) stops a stale head before starting its own."""
    _write_head(_head_record(victim.pid))

    def no_launch(*args, **kwargs):
        raise RuntimeError("stop here: the test only needs what start() did before launching")

    monkeypatch.setattr(local_head, "_launch", no_launch)
    with pytest.raises(RuntimeError, match="stop here"):
        local_head.start(num_cpus=1)
    time.sleep(0.5)
    assert _alive(victim)


def test_a_node_record_naming_a_stranger_is_dropped_not_signalled(gspo_home, gspo_at, victim):
    record = nodes.NodeRecord(role="head", hostname=nodes.node_name(), pid=victim.pid, address="127.0.0.1:1",
                              node_ip=None, npus=0, argv=["/venv/bin/ray", "start", "--head", "--block"],
                              log_file="x", started_at=time.time())
    nodes.write_record(record)
    proc = gspo_at("cluster", "down")
    time.sleep(0.5)
    assert _alive(victim), "gspo killed a process it did not start"
    assert "which is no longer the Ray head gspo started" in proc.stderr, proc.stderr
    assert not nodes.record_file().exists()
    assert nodes.live_record() is None


def _fake_ray(tmp_path: Path) -> Path:
    """An executable called `ray` that just waits: stands in for `ray start --block` (no Ray needed)."""
    exe = tmp_path / "bin" / "ray"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    exe.chmod(0o755)
    return exe


def test_control_the_process_gspo_started_is_still_stopped(gspo_home, gspo_at, tmp_path):
    exe = _fake_ray(tmp_path)
    temp_dir = gspo_home / "ray" / "tmp" / "ray"
    argv = [str(exe), "start", "--head", "--block", f"--temp-dir={temp_dir}"]
    ours = subprocess.Popen(argv, start_new_session=True)
    try:
        for _ in range(100):  # until it has exec'd (its command line is the one gspo ran)
            if procs.command_line(ours.pid) and procs.command_line(ours.pid)[-1] == argv[-1]:
                break
            time.sleep(0.05)
        _write_head(_head_record(ours.pid, argv=argv, identity=procs.identity(ours.pid)))
        assert local_head.is_ours(local_head.read_record())
        proc = gspo_at("cluster", "down")
        ours.wait(timeout=30)
        assert "Stopped the embedded Ray head" in proc.stderr, proc.stderr
        # and a record of an older gspo (no identity, no argv) is recognised by this home's temp dir
        older = subprocess.Popen(argv, start_new_session=True)
        for _ in range(100):
            if (procs.command_line(older.pid) or [""])[-1] == argv[-1]:
                break
            time.sleep(0.05)
        _write_head(_head_record(older.pid))
        proc = gspo_at("cluster", "down")
        older.wait(timeout=30)
        assert "Stopped the embedded Ray head" in proc.stderr, proc.stderr
    finally:
        for p in (ours, locals().get("older")):
            if p is not None and p.poll() is None:
                p.kill()


def test_a_run_lock_whose_pid_was_reused_by_another_gspo_process_is_free(tmp_path):
    """run.lock: a dead job's pid now held by another process whose command line says gspo (old code: 'alive',
    so `gspo train` of that run was refused until the lock was deleted by hand)."""
    from gspo_cli.runs import lock

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "gspo"], start_new_session=True)
    try:
        time.sleep(0.3)
        run = tmp_path / "run"
        run.mkdir()
        ident = _identity(other.pid)
        (run / "run.lock").write_text(json.dumps({
            "job_id": "gspo-train-1", "engine": "native", "host": socket.gethostname(), "job_pid": other.pid,
            "job_host": socket.gethostname(), "job_identity": {**ident, "start_ticks": ident["start_ticks"] - 1}}))
        assert lock.holder_state(lock.read(run)) == "gone"
        # control: the process that wrote the lock is alive
        record = {**lock.read(run), "job_identity": ident}
        assert lock.holder_state(record) == "alive"
    finally:
        other.kill()
        other.wait()


def test_head_record_round_trip_keeps_the_identity(gspo_home):
    assert procs.identity(os.getpid()) == _identity(os.getpid())
    record = local_head.HeadRecord(**_head_record(os.getpid(), argv=["x"], identity=_identity(os.getpid())))
    _write_head(asdict(record))
    assert local_head.read_record() == record

"""jobs/procs: the children a failed start left running are ended, and nothing started before it."""

from __future__ import annotations

import subprocess

from gspo_cli.jobs import procs


def test_kill_new_children_ends_only_what_started_after_the_snapshot():
    older = subprocess.Popen(["sleep", "60"])
    try:
        before = procs.children()
        assert older.pid in before
        newer = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
        assert {p.pid for p in newer} <= procs.children()
        assert procs.kill_new_children(before) == sorted(p.pid for p in newer)
        assert not any(procs.pid_alive(p.pid) for p in newer)  # killed and reaped
        assert older.poll() is None and older.pid in procs.children()
    finally:
        older.kill()
        older.wait()


# A stand-in for `ray start --block`: on SIGTERM it stops its child itself (Ray stops the raylet before the GCS),
# the child notes which signal reached it; both lead/join their own process group as gspo starts Ray nodes.
LEADER = r"""
import signal, subprocess, sys, time
log, mode = sys.argv[1], sys.argv[2]
child = subprocess.Popen([sys.executable, "-c", sys.argv[3], log])
def on_term(*_):
    open(log, "a").write("leader: SIGTERM\n")
    if mode == "orderly":
        child.send_signal(signal.SIGUSR1)
        child.wait()
        sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
open(log, "a").write("leader: up\n")
while True:
    time.sleep(0.1)
"""
CHILD = r"""
import signal, sys, time
log = sys.argv[1]
def note(name):
    def handler(*_):
        open(log, "a").write(f"child: {name}\n")
        if name == "SIGUSR1":
            sys.exit(0)
    return handler
signal.signal(signal.SIGTERM, note("SIGTERM"))
signal.signal(signal.SIGUSR1, note("SIGUSR1"))
open(log, "a").write("child: up\n")
while True:
    time.sleep(0.1)
"""


def _leader(tmp_path, mode):
    import sys
    import time

    log = tmp_path / f"{mode}.log"
    proc = subprocess.Popen([sys.executable, "-c", LEADER, str(log), mode, CHILD], start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.exists() and log.read_text().count(": up") == 2):
        time.sleep(0.05)
    assert log.read_text().count(": up") == 2
    return proc, log


def test_stop_ray_node_lets_the_leader_stop_its_node_in_order(tmp_path):
    proc, log = _leader(tmp_path, "orderly")
    procs.stop_ray_node(proc.pid, timeout=60)
    assert not procs.group_alive(proc.pid)
    lines = log.read_text().splitlines()
    # the leader alone got SIGTERM and stopped its child its own way; the child never saw a SIGTERM of the group
    # (kill_group's SIGTERM to every process at once: how the raylet lost its GCS first)
    assert lines[2:] == ["leader: SIGTERM", "child: SIGUSR1"], lines


def test_stop_ray_node_ends_the_group_when_the_leader_does_not_stop(tmp_path):
    proc, log = _leader(tmp_path, "stuck")
    procs.stop_ray_node(proc.pid, timeout=1)
    assert not procs.group_alive(proc.pid)
    assert "leader: SIGTERM" in log.read_text()
    proc.wait(timeout=10)


def test_stop_ray_node_leaves_a_process_that_leads_no_group():
    other = subprocess.Popen(["sleep", "60"])  # in this test's process group, not its own: not a node gspo started
    try:
        procs.stop_ray_node(other.pid, timeout=1)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()

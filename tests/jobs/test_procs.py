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

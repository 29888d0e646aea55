"""The embedded head counts as up only once `ray start` says its node started, not when the dashboard first answers:
on a busy host the dashboard answers while the raylet has yet to register, and `ray start` can still give up
("The current node timed out during startup") and stop the whole head a moment later. gspo then recorded a dead
head and every command after it failed with "cannot reach Ray" (seen with several test sessions on 2 cores).

A stand-in for `ray start --head --block`: it serves the Jobs API's /api/version (as the dashboard does), writes
Ray's own lines to the head's log, and either exits with Ray's startup error or says "Ray runtime started"."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

from gspo_cli.jobs import local_head
from gspo_cli.jobs.procs import kill_group

STANDIN = r"""
import http.server, sys, threading, time
port, fate = int(sys.argv[1]), sys.argv[2]

class Api(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"version": "4"}')
    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", port), Api)
threading.Thread(target=server.serve_forever, daemon=True).start()
print("INFO scripts.py:1043 -- Local node IP: 127.0.0.1", flush=True)
time.sleep(1.5)  # the dashboard answers meanwhile, the node is not up yet
if fate == "fails":
    print("Exception: The current node timed out during startup. This could happen because some of the raylet "
          "failed to startup or the GCS has become overloaded.", flush=True)
    sys.exit(1)
print("SUCC scripts.py:1085 -- Ray runtime started.", flush=True)
print("INFO scripts.py:1266 -- This command will now block forever until terminated by a signal.", flush=True)
time.sleep(120)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _standin(tmp_path, fate: str):
    log_file = tmp_path / f"head-{fate}.log"
    log_file.write_text("an earlier start's lines: Ray runtime started.\n")  # before this start's offset: not read
    offset = log_file.stat().st_size
    port = _free_port()
    with open(log_file, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-c", STANDIN, str(port), fate], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    record = local_head.HeadRecord(address="127.0.0.1:1", dashboard_url=f"http://127.0.0.1:{port}", pid=proc.pid,
                                   temp_dir=str(tmp_path), log_file=str(log_file), started_at=time.time())
    return proc, record, offset


def _dashboard_answers_before_the_exit(proc, record) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if local_head.dashboard_alive(record.dashboard_url, timeout=1.0):
            return True
        time.sleep(0.05)
    return False


def test_a_start_that_fails_after_its_dashboard_answered_is_not_up(tmp_path):
    proc, record, offset = _standin(tmp_path, "fails")
    try:
        # The situation is real in this stand-in: the dashboard answers before `ray start` gives up (the old
        # readiness test, dashboard_alive alone, said "up" here).
        assert _dashboard_answers_before_the_exit(proc, record)
        assert local_head._wait_until_up(proc, record, offset) is False
        assert proc.returncode == 1
        assert "timed out during startup" in local_head.start_failure_reason(record.log_file, offset)
    finally:
        kill_group(proc.pid, timeout=5)


def test_a_start_that_reports_its_node_up_is_up(tmp_path):
    proc, record, offset = _standin(tmp_path, "starts")
    try:
        assert local_head._wait_until_up(proc, record, offset) is True
        assert proc.poll() is None
        assert "Ray runtime started" in (tmp_path / "head-starts.log").read_text()
    finally:
        kill_group(proc.pid, timeout=5)


def test_a_head_lacking_resources_is_restarted_only_when_its_jobs_api_lists_no_active_job(monkeypatch):
    """`_refuse_if_busy` on what the jobs API says (the real head: tests/env/test_node_resources.py): no job -> go
    on; a running job -> refused by name; no answer -> refused too (a head gspo cannot read is never restarted)."""
    import pytest

    from gspo_cli.errors import ClusterError
    from gspo_cli.jobs.resources import NodeResources

    record = local_head.HeadRecord(address="127.0.0.1:1", dashboard_url="http://127.0.0.1:9", pid=1, temp_dir="/x",
                                   log_file="/y", started_at=0.0)
    node = NodeResources(resources={"GPU": 1.0}, why="a verl CPU run")
    monkeypatch.setattr(local_head, "active_jobs", lambda r: [])
    assert local_head._refuse_if_busy(record, node, {"GPU": 1.0}) is None
    monkeypatch.setattr(local_head, "active_jobs", lambda r: ["a", "b", "c", "d"])
    with pytest.raises(ClusterError, match=r"needs GPU=1, and it runs 4 job\(s\) \(a, b, c, \.\.\.\), so gspo does not"):
        local_head._refuse_if_busy(record, node, {"GPU": 1.0})
    monkeypatch.undo()
    with pytest.raises(ClusterError, match="its jobs API did not list its jobs"):  # nothing listens on port 9
        local_head._refuse_if_busy(record, node, {"GPU": 1.0})
    assert local_head._union({"GPU": 2.0, "X": 1.0}, {"GPU": 1.0, "NPU": 4.0}) == {"GPU": 2.0, "X": 1.0, "NPU": 4.0}

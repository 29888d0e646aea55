"""Which cluster and which token a gspo command uses (no Ray started): the node record of this host wins over the
embedded head, a named address wins over the record, and gspo's token file is made 0600, reused, rotated."""

from __future__ import annotations

import os
import time

from gspo_cli.jobs import auth, nodes
from gspo_cli.jobs.target import resolve_target


def _record(pid: int) -> nodes.NodeRecord:
    from gspo_cli.jobs.procs import identity

    # gspo records the started process's identity with its pid (a pid alone is never trusted: docs/security.md)
    return nodes.NodeRecord(role="worker", hostname=nodes.node_name(), pid=pid, address="10.0.0.1:6379",
                            node_ip=None, npus=16, argv=[], log_file="", started_at=time.time(),
                            dashboard_url="http://10.0.0.1:8265", auth="token",
                            token_file=str(auth.cluster_token_file()), identity=identity(pid))


def test_token_file_is_private_reused_and_rotated(gspo_home):
    path, new = auth.ensure_cluster_token()
    assert new and path == gspo_home / "ray" / "auth_token" and path.stat().st_mode & 0o777 == 0o600
    first = auth.read_token(path)
    assert len(first) == 64
    assert auth.ensure_cluster_token() == (path, False) and auth.read_token(path) == first
    _, rotated = auth.ensure_cluster_token(rotate=True)
    assert rotated and auth.read_token(path) != first and path.stat().st_mode & 0o777 == 0o600


def test_the_node_started_here_is_the_cluster_in_use(gspo_home, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    nodes.write_record(_record(os.getpid()))  # a live `ray start` of this host (this process stands in)
    target = resolve_target(start_local=False)
    assert target.dashboard_url == "http://10.0.0.1:8265" and target.address == "10.0.0.1:6379"
    assert target.source.startswith("the Ray worker gspo started on this host") and not target.embedded
    assert target.auth == "token" and target.token_file == str(auth.cluster_token_file())
    named = resolve_target("http://10.9.9.9:8265", start_local=False)
    assert named.dashboard_url == "http://10.9.9.9:8265" and named.source == "--address"


def test_a_dead_record_is_not_used(gspo_home):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    nodes.write_record(_record(int(proc.stdout)))  # that process has exited
    assert nodes.live_record() is None


def test_a_named_address_of_gspos_own_cluster_gets_its_token(gspo_home):
    nodes.write_cluster(nodes.ClusterRecord(address="10.0.0.1:6379", dashboard_url="http://10.0.0.1:8266",
                                            auth="token", token_file="/shared/ray/auth_token", head="h",
                                            started_at=0.0))
    target = resolve_target("10.0.0.1:6379", start_local=False)
    assert target.dashboard_url == "http://10.0.0.1:8266" and target.token_file == "/shared/ray/auth_token"


def test_doctor_fails_a_jobs_api_that_answers_without_a_token():
    """`ray.auth` asks the jobs API without a token: an answer is an error, a 401 is ok (a real local HTTP server)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from gspo_cli.env.cluster import auth_check

    class Handler(BaseHTTPRequestHandler):
        status = 200

        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(self.status)
            self.end_headers()
            self.wfile.write(b"[]" if self.status == 200 else b"Unauthorized: Missing authentication token")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        open_head = auth_check(url)
        Handler.status = 401
        closed_head = auth_check(url)
    finally:
        server.shutdown()
    assert open_head.status == "error" and "anyone who reaches that port can run any command" in open_head.message
    assert "gspo cluster up" in open_head.fix
    assert closed_head.status == "ok" and "(HTTP 401)" in closed_head.message
    assert auth_check("http://127.0.0.1:9").status == "skip"  # nothing listens: cannot tell

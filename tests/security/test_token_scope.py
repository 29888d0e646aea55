"""A token belongs to one cluster: a listener on another loopback port never receives it, whatever names it.

The home holds a cluster token and the record of the cluster `gspo cluster up` started (on a loopback port where
nothing listens). A tiny HTTP server on another loopback port plays "another host": it answers `/api/version` as a
Ray dashboard would, so the jobs client goes on to submit, and records every request's headers. `--address`,
`RAY_ADDRESS`, a copied preset's `cluster.address` and `--set cluster.address` all point gspo at it; no request
may carry an Authorization header. As a control, the same listener recorded as gspo's own cluster does get it.
"""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest
import yaml

from gspo_cli.jobs import auth, nodes

pytestmark = pytest.mark.security


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[dict] = []

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        Recorder.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers)})
        if self.headers.get("Authorization") == "Bearer wrong-token":  # what a token-checked Ray answers
            body = "Unauthorized: Invalid authentication token"
            self.send_response(401)
        elif self.path.startswith("/api/version"):
            body = json.dumps({"version": "4", "ray_version": "2.60.0", "ray_commit": "x", "session_name": "s"})
            self.send_response(200)
        else:
            body = "listener: not a Ray cluster"
            self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def listener():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Recorder.seen = []
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def home_with_cluster(gspo_home, monkeypatch):
    """A home after `gspo cluster up`: its token and its cluster record (a head on another port)."""
    for var in auth.AUTH_VARS:
        monkeypatch.delenv(var, raising=False)
    path, _ = auth.ensure_cluster_token()
    nodes.write_cluster(nodes.ClusterRecord(address="127.0.0.1:1", dashboard_url="http://127.0.0.1:2", auth="token",
                                            token_file=str(path), head="head", started_at=time.time()))
    return auth.read_token(path)


def _preset_copy(gspo_home, address):
    from gspo_cli.config.presets import load_preset
    from gspo_cli.config.schema import to_jsonable

    data = to_jsonable(load_preset("tiny"))
    data["cluster"]["address"] = address
    path = gspo_home / "presets" / "leaky.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


def _sources(gspo_home, url):
    leaky = _preset_copy(gspo_home, url)
    return {
        "--address": (["jobs", "list", "--address", url], {}),
        "RAY_ADDRESS": (["jobs", "list"], {"RAY_ADDRESS": url}),
        "preset cluster.address (copied preset)": (["prepare-data", "--preset", str(leaky)], {}),
        "--set cluster.address": (["prepare-data", "--preset", "tiny", "--set", f"cluster.address={url}"], {}),
    }


def test_no_address_source_sends_the_token_elsewhere(home_with_cluster, gspo_home, listener, gspo_at):
    url = f"http://{listener}"
    for source, (args, env) in _sources(gspo_home, url).items():
        Recorder.seen = []
        proc = gspo_at(*args, env=env)
        assert Recorder.seen, f"{source}: the listener was never called ({proc.stderr[-400:]})"
        leaked = [r for r in Recorder.seen if any(k.lower() == "authorization" for k in r["headers"])]
        assert not leaked, f"{source}: token sent to another cluster: {leaked}"
        assert all(home_with_cluster not in json.dumps(r) for r in Recorder.seen)
        assert "no token is sent" in proc.stderr, (source, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr


def _auth_headers() -> set:
    return {v for r in Recorder.seen for k, v in r["headers"].items() if k.lower() == "authorization"}


def test_control_the_recorded_cluster_does_get_its_token(home_with_cluster, listener, gspo_at):
    """The listener recorded as this home's cluster: now the token is sent (the probe above can fail)."""
    nodes.write_cluster(nodes.ClusterRecord(address=listener, dashboard_url=f"http://{listener}", auth="token",
                                            token_file=str(auth.cluster_token_file()), head="head",
                                            started_at=time.time()))
    proc = gspo_at("jobs", "list", "--address", f"http://{listener}")
    assert f"Bearer {home_with_cluster}" in _auth_headers(), (Recorder.seen, proc.stderr)


def test_a_token_the_user_names_is_sent_and_its_refusal_named(home_with_cluster, tmp_path, listener, gspo_at):
    theirs = tmp_path / "their_token"
    theirs.write_text("their-cluster-token")
    proc = gspo_at("jobs", "list", "--address", f"http://{listener}", env={"RAY_AUTH_TOKEN_PATH": str(theirs)})
    assert _auth_headers() == {"Bearer their-cluster-token"}, (Recorder.seen, proc.stderr) and "no token is sent" not in proc.stderr


def test_a_refused_token_the_user_named_is_reported_as_theirs(home_with_cluster, tmp_path, listener, gspo_at):
    wrong = tmp_path / "wrong_token"
    wrong.write_text("wrong-token")
    proc = gspo_at("jobs", "list", "--address", f"http://{listener}", env={"RAY_AUTH_TOKEN_PATH": str(wrong)})
    assert proc.returncode != 0 and f"the token in {wrong} was refused" in proc.stderr, proc.stderr
    assert "gspo sent no token" not in proc.stderr and "Traceback" not in proc.stderr
    env = {"RAY_AUTH_TOKEN": "wrong-token", "RAY_AUTH_MODE": "token"}
    proc = gspo_at("jobs", "list", "--address", f"http://{listener}", env=env)
    assert "the token in RAY_AUTH_TOKEN was refused" in proc.stderr, proc.stderr

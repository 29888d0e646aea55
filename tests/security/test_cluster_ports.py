"""Every port a `gspo cluster up` head opens, called without the token from this host's own address.

A real head on this host's non-loopback address (as on a cluster), default options: each listening socket of its
process tree is listed with its bind address (the table in docs/ascend.md, Ports), and each one outside loopback
must refuse a caller without the token (HTTP 401/403, gRPC UNAUTHENTICATED). Ray's Prometheus exporters are off by
default (jobs/exporters.py), so no port of this head may answer metrics: not the per-node agent's, and not the
autoscaler's (44217) or the dashboard's (44227), which Ray binds to every interface on a head off loopback. Another
Ray head on the host can hold 44217/44227 and hide an exporter that would have listened, so the test also reads the
ports those two processes were given.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from test_embedded_head_auth import _external_ip, _grpc_codes, _http, _is_loopback, _listening

from gspo_cli.jobs import exporters

pytestmark = [pytest.mark.security, pytest.mark.ray, pytest.mark.slow]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def head(gspo_home, gspo_at):
    ip = _external_ip()
    if ip is None:
        pytest.skip("this host has no non-loopback IPv4 address")
    port, dash = _free_port(), _free_port()
    up = gspo_at("cluster", "up", "--preset", "tiny", "--node-ip", ip, "--num-cpus", "1", "--wait", "0",
                 "--port", str(port), "--dashboard-port", str(dash), timeout=300)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        from gspo_cli.jobs import nodes

        yield nodes.read_record(), ip, up
    finally:
        gspo_at("cluster", "down", timeout=120)


def test_cluster_up_ports_refuse_unauthenticated_callers(head):
    record, ip, up = head
    assert "/tmp/ray" not in " ".join(record.argv) and record.temp_dir.startswith(str(os.environ["GSPO_HOME"])) \
        or "/gspo-ray-" in record.temp_dir
    deadline = time.monotonic() + 120
    sockets = _listening(record.pid)
    while not {"raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= {n for *_, n in sockets} and (
            time.monotonic() < deadline):
        time.sleep(1)
        sockets = _listening(record.pid)
    rows = []
    for bind, port, name in sorted(set(sockets), key=lambda s: (s[2], s[1])):
        if _is_loopback(bind):
            rows.append((name, port, bind, "loopback only"))
            continue
        answer = _http(ip, port)
        if answer is not None:
            status, body = answer
            assert status in (401, 403) and not body.startswith("# HELP"), (name, port, status, body[:100])
            rows.append((name, port, bind, f"HTTP {status}"))
            continue
        codes = set(_grpc_codes(ip, port).values())
        assert "OK" not in codes and "UNAUTHENTICATED" in codes, (name, port, codes)
        rows.append((name, port, bind, "gRPC UNAUTHENTICATED"))
    print("\n".join(f"{n:<24} {p:>6}  {b:<16} {v}" for n, p, b, v in rows))
    if sys.platform == "linux":  # this head's lines of `ss -ltnp` (its process tree), for docs/ascend.md
        import psutil

        root = psutil.Process(record.pid)
        pids = {p.pid for p in [root, *root.children(recursive=True)]}
        ss = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout.splitlines()
        print("\n".join(line for line in ss if any(f"pid={p}," in line for p in pids)))
    assert {"gcs_server", "raylet"} <= {n for n, *_ in rows}
    assert not {p for _, p, _ in sockets} & {44217, 44227}, sockets
    assert _exporter_ports(record.pid) == {("monitor.py", exporters.UNBINDABLE_PORT),
                                           ("dashboard.py", exporters.UNBINDABLE_PORT)}


def _exporter_ports(pid: int) -> set[tuple[str, str | None]]:
    """(script, the port its exporter was given) for the autoscaler monitor and the dashboard of this head."""
    import psutil

    root = psutil.Process(pid)
    found = set()
    for proc in [root, *root.children(recursive=True)]:
        try:
            cmd, env = proc.cmdline(), proc.environ()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        for script, var in (("monitor.py", "AUTOSCALER_METRIC_PORT"), ("dashboard.py", "DASHBOARD_METRIC_PORT")):
            if any(arg.endswith(f"/{script}") for arg in cmd):
                found.add((script, env.get(var)))
    return found

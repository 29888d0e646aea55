"""The embedded loopback head is not open to the network: every port it listens on outside loopback refuses a
caller without its token, tried for real from this host's non-loopback address (Ray cannot bind its GCS and
raylet ports to 127.0.0.1, so the token is the protection; the dashboard itself is on 127.0.0.1 only)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

pytestmark = pytest.mark.ray

# One real method per kind of gRPC server Ray runs; each server knows only its own (others: UNIMPLEMENTED).
METHODS = [
    "/ray.rpc.NodeInfoGcsService/GetAllNodeInfo",  # GCS
    "/ray.rpc.NodeManagerService/GetNodeStats",  # raylet
    "/ray.rpc.ObjectManagerService/Push",  # raylet's object manager
    "/ray.rpc.ReporterService/GetTraceback",  # dashboard agent
    "/ray.rpc.LogService/ListLogs",  # dashboard agent
    "/ray.rpc.events.EventAggregatorService/AddEvents",  # dashboard agent
    "/ray.rpc.RayletDriver/ClusterInfo",  # Ray Client server
    "/ray.rpc.CoreWorkerService/GetCoreWorkerStats",  # every worker process (job drivers, tasks, actors)
]


def _external_ip() -> str | None:
    import psutil

    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family == socket.AF_INET and not ipaddress.ip_address(a.address).is_loopback:
                return a.address
    return None


def _listening(pid: int) -> list[tuple[str, int, str]]:
    import psutil

    root = psutil.Process(pid)
    out = []
    for proc in [root, *root.children(recursive=True)]:
        try:
            conns = proc.net_connections(kind="inet")
            name = proc.name()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        out += [(c.laddr.ip, c.laddr.port, name) for c in conns if c.status == psutil.CONN_LISTEN]
    return out


def _is_loopback(ip: str) -> bool:
    ip = ip.removeprefix("::ffff:")
    return ipaddress.ip_address(ip).is_loopback


def _http(ip: str, port: int) -> tuple[int, str] | None:
    """(status, body start) of a plain GET /api/jobs/, or None when the port does not speak HTTP."""
    try:
        with socket.create_connection((ip, port), timeout=3) as sock:
            sock.sendall(b"GET /api/jobs/ HTTP/1.0\r\nHost: x\r\n\r\n")
            sock.settimeout(3)
            data = b""
            while len(data) < 4096:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    if not data.startswith(b"HTTP/"):
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def _grpc_codes(ip: str, port: int, metadata=None) -> dict[str, str]:
    import grpc

    codes = {}
    with grpc.insecure_channel(f"{ip}:{port}") as channel:
        for method in METHODS:
            try:
                channel.unary_unary(method)(b"", timeout=5, metadata=metadata)
                codes[method] = "OK"
            except grpc.RpcError as exc:
                codes[method] = exc.code().name
    return codes


def test_every_port_off_loopback_refuses_callers_without_the_token(ray_head):
    from gspo_cli.jobs.auth import read_token

    ext = _external_ip()
    if ext is None:
        pytest.skip("this host has no non-loopback IPv4 address to call from")
    import time

    deadline = time.monotonic() + 120
    sockets = _listening(ray_head.pid)
    while not {"raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= {n for *_, n in sockets} and (
            time.monotonic() < deadline):  # the head answers before all its daemons listen
        time.sleep(1)
        sockets = _listening(ray_head.pid)
    dash_port = int(ray_head.dashboard_url.rsplit(":", 1)[1])
    assert {ip for ip, port, _ in sockets if port == dash_port} == {"127.0.0.1"}, sockets  # jobs API: loopback only
    exposed = sorted({(port, name) for ip, port, name in sockets if not _is_loopback(ip)})
    assert {"gcs_server", "raylet"} <= {name for _, name in exposed}, sockets  # Ray's GCS and raylet do listen on every interface: the token must guard them
    verdicts = {}
    for port, name in exposed:
        answer = _http(ext, port)
        if answer is not None:
            status, body = answer
            verdicts[(port, name)] = f"HTTP {status}"
            # no Prometheus exporter either (jobs/exporters.py): every HTTP port off loopback wants the token
            assert status in (401, 403) and not body.startswith("# HELP"), (port, name, status, body[:100])
            continue
        codes = _grpc_codes(ext, port)
        verdicts[(port, name)] = codes
        assert "OK" not in codes.values(), (port, name, codes)
        assert "UNAUTHENTICATED" in codes.values(), (port, name, codes)
    print("unauthenticated calls from", ext, verdicts)
    # The same call with the token is answered: the probe can tell a refusal from a broken port.
    gcs_port = int(ray_head.address.rsplit(":", 1)[1])
    token = read_token(ray_head.token_file)
    with_token = _grpc_codes(ext, gcs_port, metadata=(("authorization", f"Bearer {token}"),))
    assert with_token["/ray.rpc.NodeInfoGcsService/GetAllNodeInfo"] == "OK"

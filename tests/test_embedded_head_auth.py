"""The embedded loopback head is not open to the network: every port it and its workers listen on is on 127.0.0.1
(Ray's local-only mode, gspo_cli/jobs/loopback.py), none answers at this host's network address, and every gRPC
port and agent HTTP port still refuses a local caller without its token (other users of this host). The control:
the same head started without the local-only switch listens on every interface (Ray turns
`--node-ip-address=127.0.0.1` into the host's address), so the bind check bites."""

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


def _sockets_once_up(pid: int) -> list[tuple[str, int, str]]:
    import time

    deadline = time.monotonic() + 120
    sockets = _listening(pid)
    while not {"raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= {n for *_, n in sockets} and (
            time.monotonic() < deadline):  # the head answers before all its daemons listen
        time.sleep(1)
        sockets = _listening(pid)
    return sockets


def _refused_without_token(ip: str, port: int, name: str) -> str | dict[str, str]:
    answer = _http(ip, port)
    if answer is not None:
        status, body = answer
        # no Prometheus exporter either (jobs/exporters.py): every HTTP port wants the token
        assert status in (401, 403) and not body.startswith("# HELP"), (port, name, status, body[:100])
        return f"HTTP {status}"
    codes = _grpc_codes(ip, port)
    assert "OK" not in codes.values(), (port, name, codes)
    assert "UNAUTHENTICATED" in codes.values(), (port, name, codes)
    return codes


def test_every_port_is_on_loopback_and_refuses_callers_without_the_token(ray_head, gspo):
    from gspo_cli.jobs.auth import read_token

    # a job's workers too (each runs a CoreWorkerService): one job run first, its idle workers stay a while
    smoke = gspo("cluster", "smoke", "--address", ray_head.dashboard_url)
    assert smoke.returncode == 0, smoke.stderr
    sockets = _sockets_once_up(ray_head.pid)
    names = {name for *_, name in sockets}
    assert {"gcs_server", "raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= names, sockets
    off_loopback = [s for s in sockets if not _is_loopback(s[0])]
    assert off_loopback == [], sockets  # GCS, raylet, object manager, agents, client server, dashboard, workers
    ext = _external_ip()
    if ext is not None:  # nothing answers at the host's network address
        for _, port, name in sockets:
            with socket.socket() as sock:
                sock.settimeout(3)
                assert sock.connect_ex((ext, port)) != 0, (port, name)
    verdicts = {(port, name): _refused_without_token("127.0.0.1", port, name)
                for ip, port, name in sorted(set(sockets))}
    print("unauthenticated calls from 127.0.0.1", verdicts)
    # The same call with the token is answered: the probe can tell a refusal from a broken port.
    gcs_port = int(ray_head.address.rsplit(":", 1)[1])
    token = read_token(ray_head.token_file)
    with_token = _grpc_codes("127.0.0.1", gcs_port, metadata=(("authorization", f"Bearer {token}"),))
    assert with_token["/ray.rpc.NodeInfoGcsService/GetAllNodeInfo"] == "OK"


@pytest.mark.slow
def test_control_without_the_local_only_switch_the_head_listens_on_every_interface(gspo_home, monkeypatch):
    """Ray's default on Linux, which the embedded head ran with before: the bind check above would fail on it."""
    from gspo_cli.jobs import local_head, loopback

    if _external_ip() is None:
        pytest.skip("this host has no non-loopback IPv4 address")
    monkeypatch.setattr(loopback, "server_env", dict)  # the head's `ray start` without the switch
    monkeypatch.delenv(loopback.SWITCH, raising=False)  # nor inherited (a test before on this worker may set it)
    record = local_head.start(num_cpus=1)
    try:
        sockets = _sockets_once_up(record.pid)
        exposed = {name for ip, _, name in sockets if not _is_loopback(ip)}
        print(sorted(sockets))
        assert {"gcs_server", "raylet"} <= exposed, sockets
    finally:
        local_head.stop()

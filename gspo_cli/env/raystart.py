"""`gspo cluster up` / `gspo cluster join`: `ray start` with the exports applied, the NPU count from npu-smi, a
`gspo-node` label, and token auth (the token file under the shared `$GSPO_HOME/ray/`, see `jobs/auth.py`).

gspo runs `ray start --block` as a child in its own process group and records it in
`$GSPO_HOME/ray/nodes/<node name>.json` (`jobs/nodes.py`); `gspo cluster down` signals only that group. gspo
never kills Ray processes it did not start and never deletes Ray's temp directory.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from gspo_cli.config import devices
from gspo_cli.env.host import Host
from gspo_cli.env.node_setup import raise_nofile
from gspo_cli.errors import ClusterError, ConfigError
from gspo_cli.jobs import auth, exporters, nodes, ray_errors
from gspo_cli.jobs.nodes import NodeRecord, nodes_dir, read_record, record_file
from gspo_cli.jobs.procs import RAY_READY_MARK, identity, no_drain_env, ray_executable, stop_recorded_group
from gspo_cli.jobs.resources import NodeResources

READY_MARK = RAY_READY_MARK
NPU_RESOURCE = str(devices.ascend().ray_resource)  # what `wait_for_npus` counts
NODE_LABEL = "gspo-node"  # jobs/nodestate.py reads it back to name nodes

__all__ = ["NodeRecord", "plan", "read_record", "record_file", "start", "stop", "wait_for_npus"]


def plan(preset: Any, *, role: str, facts: dict[str, Any], host: Host | None = None, head_address: str | None = None,
         port: int = 6379, dashboard_port: int = 8265, node_ip: str | None = None, npus: int | None = None,
         stack: str | None = None, temp_dir: str | None = None, extra_ports: dict[str, int] | None = None,
         num_cpus: int | None = None, token_file: Path | None = None, dashboard_host: str | None = None,
         dashboard_url: str | None = None, extra_args: list[str] | None = None,
         metrics: bool = False, node: NodeResources | None = None) -> dict[str, Any]:
    """The `ray start` command line and environment for this node (pure apart from the route lookup). `node`: what
    the preset's engine asks a node to offer (its spec's `node_resources`: e.g. a verl CPU run's device slots)."""
    from gspo_cli.env import exports as exports_mod

    host = host or Host()
    if role == "worker" and not head_address:
        raise ConfigError("cluster join needs the head address", "gspo cluster join HEAD_IP:6379")
    detected = len((facts.get("npu") or {}).get("devices") or [])
    count = npus if npus is not None else detected
    device = devices.of(preset)  # `auto` resolved on this node, as verl will resolve it here
    npu = device.ascend
    if npu and count == 0:
        raise ClusterError("npu-smi shows no NPUs on this node, so Ray would register none",
                           "fix the driver (gspo env doctor), or pass --npus N")
    route_head = head_address or (node_ip or None)
    ex = exports_mod.build(preset, host=host, stack=stack, facts=facts, head=route_head)
    env = _start_env(ex.exports, token_file=token_file, metrics=metrics, noset_var=device.ray_noset_var if npu else None)
    name = nodes.node_name()
    argv = [ray_executable(), "start", "--block", "--disable-usage-stats", f"--labels={NODE_LABEL}={name}"]
    if role == "head":
        # The jobs API on the cluster address only (not 0.0.0.0): a second line of defence behind the token.
        dashboard_host = dashboard_host or node_ip or _default_ip(host)
        shown = (node_ip or _default_ip(host)) if dashboard_host in ("0.0.0.0", "::") else dashboard_host
        dashboard_url = f"http://{shown}:{dashboard_port}"
        argv += ["--head", f"--port={port}", f"--dashboard-host={dashboard_host}", f"--dashboard-port={dashboard_port}",
                 "--include-dashboard=true"]
    else:
        argv += [f"--address={head_address}"]
    if node_ip:
        argv.append(f"--node-ip-address={node_ip}")
    offered = node or NodeResources()
    if npu:
        # Explicit count from npu-smi: Ray's own detection needs `import acl` or undercounts via /dev/davinci*.
        offered = NodeResources(offered.num_cpus, {**offered.resources, str(device.ray_resource): float(count)},
                                offered.why)
    argv += offered.start_args(num_cpus=num_cpus)
    if temp_dir:
        argv.append(f"--temp-dir={temp_dir}")
    for flag, value in (extra_ports or {}).items():
        argv.append(f"--{flag}={value}")
    argv += list(extra_args or [])
    address = head_address or f"{node_ip or _default_ip(host)}:{port}"
    return {"argv": argv, "env": env, "npus": count if npu else 0, "exports": ex, "role": role, "name": name,
            "nofile": preset.env.nofile,
            "address": address, "node_ip": node_ip, "token_file": str(token_file) if token_file else None,
            "dashboard_url": dashboard_url or f"http://{address.rsplit(':', 1)[0]}:{dashboard_port}",
            "temp_dir": temp_dir}


def _start_env(exports: list[tuple[str, str, str]], *, token_file: Path | None, metrics: bool,
               noset_var: str | None) -> dict[str, str]:
    """`ray start`'s environment: this process's, with the exports applied and token auth; `noset_var`: Ray's
    switch that leaves the visible devices alone (Ascend: verl assigns devices to its colocated workers itself)."""
    env = dict(os.environ)
    env.update({name: value for name, value, _ in exports})
    env = auth.server_env(env, token_file)
    env.pop("RAY_ADDRESS", None)  # `ray start` must join the address gspo names, not an inherited one
    # Ray's Prometheus exporters listen on every interface and take no token: off unless asked for.
    env = exporters.apply(env, metrics=metrics, user_env=dict(os.environ))
    env = no_drain_env(env, dict(os.environ))  # `cluster down` stops now, not after Ray's node drain (up to 30 s)
    if noset_var:
        env[noset_var] = "1"
    return env


def plan_here(preset: Any, *, role: str, stack: str | None = None, **options: Any) -> dict[str, Any]:
    """Probe this host and `plan` its `ray start`; the exports are judged against the installed stack, or
    against `stack` (`vllm-ascend==X`) without probing Python packages. `options` go to `plan`."""
    from gspo_cli.env.exports import parse_stack
    from gspo_cli.env.probes import collect_facts

    version = parse_stack(stack) if stack else None
    facts = collect_facts(with_python=version is None)
    return plan(preset, role=role, facts=facts, stack=version, **options)


def npu_wait_target(preset: Any, record: NodeRecord, *, role: str, head: str | None,
                    dashboard_port: int) -> tuple[str, int] | None:
    """(dashboard URL, NPU total the preset needs) to wait for after starting a node; None off Ascend."""
    if not devices.of(preset).ascend:
        return None
    if record.dashboard_url:  # where `cluster up` put the dashboard (see plan: the node IP, not 0.0.0.0)
        return record.dashboard_url, preset.cluster.world_size
    host_ip = (record.node_ip or "127.0.0.1") if role == "head" else str(head).rsplit(":", 1)[0]
    return f"http://{host_ip}:{dashboard_port}", preset.cluster.world_size


def _default_ip(host: Host) -> str:
    """The address Ray itself would pick for this node (the route to the outside), as `ray start` does."""
    try:
        from ray.util import get_node_ip_address

        return get_node_ip_address()
    except (ImportError, OSError, RuntimeError):  # no Ray here, or its route lookup failed: the hostname's address
        try:
            return socket.gethostbyname(host.hostname)
        except OSError:
            return "127.0.0.1"


def private_temp_dir(named: str | None) -> Path:
    """Ray's temp dir for this node, private to this user (never Ray's world-writable /tmp/ray): the folder the
    user named (created 0700, or refused if someone else's or open to others), else one under $GSPO_HOME/ray."""
    from gspo_cli import layout
    from gspo_cli.jobs import local_head
    from gspo_cli.private import ensure_private_dir

    if named:  # Ray makes its temp dir 0777: it goes one level down, inside the private folder named
        return ensure_private_dir(Path(named).expanduser().absolute(), "Ray temp dir") / local_head.RAY_SUBDIR
    ensure_private_dir(layout.ray_dir(), "Ray folder")
    previous = read_record()
    return local_head.ray_temp_dir(layout.ray_dir() / f"tmp-{nodes.node_name()}",
                                   previous.temp_dir if previous else None)


def _open_log(name: str) -> tuple[Path, int, Any]:
    from gspo_cli.jobs.nodes import _private

    log_file = nodes_dir() / f"{name}.log"
    try:
        _private()
        offset = log_file.stat().st_size if log_file.exists() else 0
        return log_file, offset, open(log_file, "ab")  # noqa: SIM115 - closed right after Popen
    except OSError as exc:
        raise ClusterError(f"cannot write gspo's Ray node record under {nodes_dir()}: {exc.strerror or exc}",
                           "export GSPO_HOME=<a writable folder> (gspo env doctor checks it)") from None


def _new_output(log_file: Path, offset: int) -> str:
    with open(log_file, "rb") as fh:
        fh.seek(offset)
        return fh.read().decode(errors="replace")


def start(p: dict[str, Any], *, timeout: float = 120.0) -> NodeRecord:
    """Start `ray start --block` in its own process group; wait until Ray reports it started."""
    existing = read_record()
    if existing is not None and existing.is_ours():
        raise ClusterError(f"gspo already started a Ray {existing.role} on this host (node {existing.hostname}, "
                           f"pid {existing.pid})", "stop it first with `gspo cluster down`")
    # The preset's open-files limit, raised in this process so that `ray start`, its raylet and workers inherit it.
    change = raise_nofile(p.get("nofile"))
    if change is not None and change.short:
        from gspo_cli.console import err

        err.print(f"[yellow]warning:[/] {change.warning()}", highlight=False)
    name = p.get("name") or nodes.node_name()
    log_file, offset, log = _open_log(name)
    with log:
        proc = subprocess.Popen(p["argv"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=p["env"], start_new_session=True)
    token_file = p.get("token_file")
    record = NodeRecord(role=p["role"], hostname=name, pid=proc.pid, address=p["address"],
                        node_ip=p["node_ip"], npus=p["npus"], argv=p["argv"], log_file=str(log_file),
                        started_at=time.time(), dashboard_url=p.get("dashboard_url"),
                        auth=auth.TOKEN if token_file else auth.DISABLED, token_file=token_file,
                        temp_dir=p.get("temp_dir"), identity=identity(proc.pid))
    nodes.write_record(record)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            record_file().unlink(missing_ok=True)
            output = _new_output(log_file, offset)
            if ray_errors.auth_refused(output):  # `ray start`'s log: words only (jobs/ray_errors.py)
                raise auth.auth_error(p["address"], "cluster join", token_file, "the head refused this node")
            raise ClusterError(f"`ray start` exited with code {proc.returncode}", f"see {log_file}")
        if READY_MARK in _new_output(log_file, offset):
            if record.role == "head":
                nodes.write_cluster(nodes.ClusterRecord(
                    address=record.address, dashboard_url=record.dashboard_url or "", auth=record.auth,
                    token_file=record.token_file, head=record.hostname, started_at=record.started_at))
            return record
        time.sleep(0.5)
    stop()
    raise ClusterError(f"`ray start` did not report ready within {timeout:.0f} s", f"see {log_file}")


def stop(name: str | None = None, timeout: float = 30.0) -> NodeRecord | None:
    """Stop the Ray node gspo started on this host (its process group only, and only while the recorded pid is
    still that `ray start`: jobs/procs.same_process); None if there is none. A stale record is removed."""
    record = read_record(name)
    if record is None:
        return None
    stopped = stop_recorded_group(record.pid, record.identity, argv=record.argv, ray_node=True, timeout=timeout)
    record_file(name).unlink(missing_ok=True)
    cluster = nodes.read_cluster()
    if record.role == "head" and cluster is not None and cluster.head == record.hostname:
        nodes.cluster_file().unlink(missing_ok=True)
    if not stopped:
        from gspo_cli.jobs.procs import pid_alive

        if pid_alive(record.pid):
            from gspo_cli.console import err

            err.print(f"[yellow]warning:[/] the node record named pid {record.pid}, which is no longer the Ray "
                      f"{record.role} gspo started (the pid was reused); removed the record, stopped nothing",
                      highlight=False)
        return None
    return record


def wait_for_npus(address: str, want: int, *, timeout: float, on_progress=None) -> float:
    """Poll the cluster (its dashboard URL) until it registers `want` NPUs; returns the total seen."""
    from gspo_cli.jobs import client as jobs

    deadline = time.monotonic() + timeout
    seen = 0.0
    while True:
        try:
            seen = float(jobs.cluster_status(address)["resources"].get(NPU_RESOURCE, 0))
        except ClusterError:
            seen = 0.0
        if on_progress:
            on_progress(seen)
        if seen >= want or time.monotonic() >= deadline:
            return seen
        time.sleep(2.0)

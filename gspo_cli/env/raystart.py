"""`gspo cluster up` / `gspo cluster join`: `ray start` with the exports applied and the NPU count from npu-smi.

gspo runs `ray start --block` as a child in its own process group and records it in
`$GSPO_HOME/ray/nodes/<hostname>.json`; `gspo cluster down` signals only that group. gspo never kills Ray
processes it did not start and never deletes Ray's temp directory.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gspo_cli import layout
from gspo_cli.env import matrix
from gspo_cli.env.host import Host
from gspo_cli.env.node_setup import raise_nofile
from gspo_cli.errors import ClusterError, ConfigError
from gspo_cli.fsutil import atomic_write_json
from gspo_cli.jobs.procs import kill_group, pid_alive, ray_executable

READY_MARK = "Ray runtime started"


@dataclass
class NodeRecord:
    role: str  # head | worker
    hostname: str
    pid: int  # leader of the process group gspo created
    address: str  # GCS address of the cluster
    node_ip: str | None
    npus: int
    argv: list[str]
    log_file: str
    started_at: float


def nodes_dir() -> Path:
    return layout.ray_dir() / "nodes"


def record_file(hostname: str | None = None) -> Path:
    return nodes_dir() / f"{hostname or socket.gethostname()}.json"


def plan(preset: Any, *, role: str, facts: dict[str, Any], host: Host | None = None, head_address: str | None = None,
         port: int = 6379, dashboard_port: int = 8265, node_ip: str | None = None, npus: int | None = None,
         stack: str | None = None, temp_dir: str | None = None, extra_ports: dict[str, int] | None = None,
         num_cpus: int | None = None) -> dict[str, Any]:
    """The `ray start` command line and environment for this node (pure apart from the route lookup)."""
    from gspo_cli.env import exports as exports_mod

    host = host or Host()
    if role == "worker" and not head_address:
        raise ConfigError("cluster join needs the head address", "gspo cluster join HEAD_IP:6379")
    detected = len((facts.get("npu") or {}).get("devices") or [])
    count = npus if npus is not None else detected
    npu = preset.cluster.device == "npu"
    if npu and count == 0:
        raise ClusterError("npu-smi shows no NPUs on this node, so Ray would register none",
                           "fix the driver (gspo env doctor), or pass --npus N")
    route_head = head_address or (node_ip or None)
    ex = exports_mod.build(preset, host=host, stack=stack, facts=facts, head=route_head)
    env = dict(os.environ)
    env.update({name: value for name, value, _ in ex.exports})
    if npu:
        env[matrix.RAY_NOSET_VISIBLE] = "1"
    argv = [ray_executable(), "start", "--block", "--disable-usage-stats"]
    if role == "head":
        argv += ["--head", f"--port={port}", "--dashboard-host=0.0.0.0", f"--dashboard-port={dashboard_port}",
                 "--include-dashboard=true"]
    else:
        argv += [f"--address={head_address}"]
    if node_ip:
        argv.append(f"--node-ip-address={node_ip}")
    if npu:
        # Explicit count from npu-smi: Ray's own detection needs `import acl` or undercounts via /dev/davinci*.
        argv.append("--resources=" + json.dumps({"NPU": count}))
    if num_cpus is not None:
        argv.append(f"--num-cpus={num_cpus}")
    if temp_dir:
        argv.append(f"--temp-dir={temp_dir}")
    for flag, value in (extra_ports or {}).items():
        argv.append(f"--{flag}={value}")
    return {"argv": argv, "env": env, "npus": count if npu else 0, "exports": ex, "role": role,
            "nofile": preset.env.nofile,
            "address": head_address or f"{node_ip or _default_ip(host)}:{port}", "node_ip": node_ip}


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
    if preset.cluster.device != "npu":
        return None
    host_ip = (record.node_ip or "127.0.0.1") if role == "head" else str(head).rsplit(":", 1)[0]
    return f"http://{host_ip}:{dashboard_port}", preset.cluster.world_size


def _default_ip(host: Host) -> str:
    try:
        return socket.gethostbyname(host.hostname)
    except OSError:
        return "127.0.0.1"


def read_record(hostname: str | None = None) -> NodeRecord | None:
    path = record_file(hostname)
    try:
        return NodeRecord(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def start(p: dict[str, Any], *, timeout: float = 120.0) -> NodeRecord:
    """Start `ray start --block` in its own process group; wait until Ray reports it started."""
    existing = read_record()
    if existing is not None and pid_alive(existing.pid):
        raise ClusterError(f"gspo already started a Ray {existing.role} on this host (pid {existing.pid})",
                           "stop it first with `gspo cluster down`")
    # The preset's open-files limit, raised in this process so that `ray start`, its raylet and workers inherit it.
    change = raise_nofile(p.get("nofile"))
    if change is not None and change.short:
        from gspo_cli.console import err

        err.print(f"[yellow]warning:[/] {change.warning()}", highlight=False)
    log_file = nodes_dir() / f"{socket.gethostname()}.log"
    try:
        nodes_dir().mkdir(parents=True, exist_ok=True)
        offset = log_file.stat().st_size if log_file.exists() else 0
        log = open(log_file, "ab")  # noqa: SIM115 - closed right after Popen
    except OSError as exc:
        raise ClusterError(f"cannot write gspo's Ray node record under {nodes_dir()}: {exc.strerror or exc}",
                           "export GSPO_HOME=<a writable folder> (gspo env doctor checks it)") from None
    with log:
        proc = subprocess.Popen(p["argv"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=p["env"], start_new_session=True)
    record = NodeRecord(role=p["role"], hostname=socket.gethostname(), pid=proc.pid, address=p["address"],
                        node_ip=p["node_ip"], npus=p["npus"], argv=p["argv"], log_file=str(log_file),
                        started_at=time.time())
    atomic_write_json(record_file(), asdict(record))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            record_file().unlink(missing_ok=True)
            raise ClusterError(f"`ray start` exited with code {proc.returncode}", f"see {log_file}")
        with open(log_file, "rb") as fh:
            fh.seek(offset)
            if READY_MARK.encode() in fh.read():
                return record
        time.sleep(0.5)
    stop()
    raise ClusterError(f"`ray start` did not report ready within {timeout:.0f} s", f"see {log_file}")


def stop(hostname: str | None = None, timeout: float = 30.0) -> NodeRecord | None:
    """Stop the Ray node gspo started on this host (its process group only); None if there is none."""
    record = read_record(hostname)
    if record is None:
        return None
    kill_group(record.pid, timeout=timeout)
    record_file(hostname).unlink(missing_ok=True)
    return record


def wait_for_npus(address: str, want: int, *, timeout: float, on_progress=None) -> float:
    """Poll the cluster until it registers `want` NPUs (gspo cluster status); returns the total seen."""
    from gspo_cli.jobs import client as jobs

    deadline = time.monotonic() + timeout
    seen = 0.0
    while True:
        try:
            seen = float(jobs.cluster_status(address)["resources"].get("NPU", 0))
        except ClusterError:
            seen = 0.0
        if on_progress:
            on_progress(seen)
        if seen >= want or time.monotonic() >= deadline:
            return seen
        time.sleep(2.0)

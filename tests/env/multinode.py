"""A 3-node Ray cluster on one machine, started the way users start one: `gspo cluster up` on "node-a", then
`gspo cluster join` on "node-b" and "node-c". Each node has its own fake `npu-smi` (16 NPUs) on PATH, its own
CANN tree (node-c's says 9.0.0, the others 9.1.0), its own Ray temp dir and ports, and its node name
(GSPO_NODE_NAME, which gspo uses where a real cluster has distinct hostnames); all share one $GSPO_HOME, as a
real cluster's nodes share a filesystem. Stopping is each node's own `gspo cluster down`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from env_hosts import make_host

NAMES = ("node-a", "node-b", "node-c")
CANN = {"node-a": "9.1.0", "node-b": "9.1.0", "node-c": "9.0.0"}
SHAPE = ["--preset", "qwen3-32b", "--set", "cluster.nnodes=3", "--stack", "vllm-ascend==0.23.0"]
NUM_CPUS = "64"  # logical: verl's placement groups ask 16 bundles x 3 CPUs per node
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    home: Path
    base: Path
    envs: dict[str, dict[str, str]]
    gcs: str
    dashboard_url: str
    temp_dirs: list[str]
    timings: dict[str, float] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    common: list[str] = field(default_factory=list)  # the node/preset arguments every up/join got
    names: tuple[str, ...] = NAMES  # the nodes, the head first
    sites: dict[str, Path] = field(default_factory=dict)  # each fake Ascend node's site-packages (torch_npu, acl)

    def gspo(self, node: str, *args: str, timeout: float = 300, extra: dict | None = None):
        env = {**self.envs[node], **(extra or {})}
        return subprocess.run([sys.executable, "-m", "gspo_cli", *args], capture_output=True, text=True, env=env,
                              timeout=timeout, cwd=REPO)

    def record(self, node: str):
        import json

        path = self.home / "ray" / "nodes" / f"{node}.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def raylet_pid(self, node: str) -> int | None:
        import psutil

        record = self.record(node)
        if record is None:
            return None
        try:
            kids = psutil.Process(record["pid"]).children(recursive=True)
        except psutil.NoSuchProcess:
            return None
        return next((p.pid for p in kids if p.name() == "raylet"), None)


def node_env(base: Path, home: Path, name: str, *, ascend: bool = True, torch_npu: bool = False,
             missed_checks: int = 3) -> dict[str, str]:
    """`ascend`: the fake Ascend host (npu-smi, CANN, and an `ip` whose route names a NIC this machine lacks, so
    a CPU run's gloo, which `cluster up` points at that NIC, could not bind); without it, this machine as it is.
    `torch_npu`: the host's Python also finds a `torch_npu` package and CANN's `acl` module (env_hosts' fake
    site-packages on PYTHONPATH), as on an Ascend node with its stack installed: verl's device detection and
    Ray's NPU accelerator manager (`import acl`: device count and SoC name) see an Ascend node.
    `missed_checks`: 1 s health checks a node may miss before the GCS declares it dead (a lost node is seen fast; a
    node busy starting verl on this 2-core box can miss a few, so the engine test allows more)."""
    env = {**os.environ, "GSPO_HOME": str(home), "GSPO_NODE_NAME": name, "RAY_USAGE_STATS_ENABLED": "0",
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
           # The GCS declares a silent node dead after `missed_checks` missed 1 s health checks (Ray's default:
           # 5 x 3 s).
           "RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
           "RAY_health_check_failure_threshold": str(missed_checks)}
    for key in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "GSPO_JOB_NODE"):
        env.pop(key, None)
    if ascend:
        host = make_host(base / name, stack={"torch-npu": "2.10.0.post4"} if torch_npu else None,
                         cann=CANN.get(name, "9.1.0"))
        env["PATH"] = f"{host.env['PATH'].split(':')[0]}:{os.environ['PATH']}"
        env["ASCEND_HOME_PATH"] = str(host.root / "usr/local/Ascend/cann")
        if torch_npu:
            env["PYTHONPATH"] = os.pathsep.join((host.env["PYTHONPATH"], env["PYTHONPATH"]))
    return env


def site_of(env: dict[str, str]) -> Path:
    """The fake site-packages a `torch_npu` node's PYTHONPATH starts with (node_env)."""
    return Path(env["PYTHONPATH"].split(os.pathsep)[0])


def start(base: Path, shape: list[str] = SHAPE, num_cpus: str | None = NUM_CPUS, *, ascend: bool = True,
          names: tuple[str, ...] = NAMES, torch_npu: bool = False, ray_args: tuple[str, ...] = (),
          missed_checks: int = 3) -> Cluster:
    """`shape`: the preset arguments of up/join (a CPU preset's nodes offer their CPU "devices" as Ray GPU slots);
    `num_cpus`: logical CPUs per node (None: gspo's default for the preset); `ascend`: fake Ascend hosts;
    `names`: the nodes (the first is the head); `torch_npu`: their Python finds torch_npu and acl (node_env);
    `ray_args`: extra `ray start` arguments of every node (`--ray-arg`); `missed_checks`: see node_env."""
    home = base / "shared-home"
    envs = {name: node_env(base, home, name, ascend=ascend, torch_npu=torch_npu, missed_checks=missed_checks)
            for name in names}
    port, dash = free_port(), free_port()
    tag = uuid.uuid4().hex[:6]
    temp_dirs = [f"/tmp/gspo-mn-{tag}-{n[-1]}" for n in names]  # short: Ray's socket paths are length-limited
    cluster = Cluster(home, base, envs, f"127.0.0.1:{port}", f"http://127.0.0.1:{dash}", temp_dirs, names=names)
    if torch_npu:
        cluster.sites = {name: site_of(env) for name, env in envs.items()}
    common = ["--node-ip", "127.0.0.1", *(["--num-cpus", num_cpus] if num_cpus else []), *shape,
              *(f"--ray-arg={a}" for a in ray_args)]
    t0 = time.monotonic()
    up = cluster.gspo("node-a", "cluster", "up", *common, "--port", str(port), "--dashboard-port", str(dash),
                      "--temp-dir", temp_dirs[0], "--wait", "0",
                      f"--ray-arg=--dashboard-agent-listen-port={free_port()}",
                      f"--ray-arg=--ray-client-server-port={free_port()}")
    cluster.outputs["up"] = up.stderr
    cluster.timings["up_s"] = time.monotonic() - t0
    if up.returncode != 0:
        return cluster
    cluster.common = common
    for name in names[1:]:
        join(cluster, name, wait=name == names[-1])
    return cluster


def join(cluster: Cluster, name: str, *, wait: bool = False) -> subprocess.CompletedProcess:
    """`gspo cluster join` on node `name` (also a node that rejoins after a loss: same temp dir and name)."""
    t1 = time.monotonic()
    for _ in range(3):  # Ray gives a new raylet 30 s to register (ray/_private/node.py): on a loaded 2-core box, retry
        res = cluster.gspo(name, "cluster", "join", cluster.gcs, *cluster.common, "--temp-dir",
                           cluster.temp_dirs[cluster.names.index(name)],
                           f"--ray-arg=--dashboard-agent-listen-port={free_port()}", *(["--wait", "120"] if wait else []))
        if res.returncode == 0 or "timed out during startup" not in (res.stderr + _log_tail(cluster, name)):
            break
    cluster.outputs[f"join {name}"] = res.stderr
    cluster.timings[f"join_{name}_s"] = time.monotonic() - t1
    return res


def _log_tail(cluster: Cluster, name: str) -> str:
    log = cluster.home / "ray" / "nodes" / f"{name}.log"
    return log.read_text(errors="replace")[-2000:] if log.is_file() else ""


def stop(cluster: Cluster) -> list[str]:
    """Each node's own `gspo cluster down`, workers first; returns the nodes whose record survived."""
    left = []
    for name in reversed(cluster.names):
        if cluster.record(name) is not None:
            cluster.gspo(name, "cluster", "down", timeout=180)
        if cluster.record(name) is not None:
            left.append(name)
    for d in cluster.temp_dirs:
        shutil.rmtree(d, ignore_errors=True)  # the test's own Ray temp dirs (gspo itself never deletes one)
    return left

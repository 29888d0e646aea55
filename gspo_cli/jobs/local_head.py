"""The embedded local Ray head: started by gspo on 127.0.0.1 when no cluster is named, recorded, reused, stopped.

gspo runs `ray start --head --block` as a child in its own process group and records it in
`$GSPO_HOME/ray/head.json`. `stop()` signals only that process group, so gspo never touches Ray processes it did
not start, and never deletes Ray's temp directory.

Protection: Ray cannot bind its GCS, raylet and object-manager ports to one interface (they listen on every
address), so this head runs with token auth, its own new token each start (`$GSPO_HOME/ray/embedded_token`,
0600): every gRPC port and the agents' HTTP ports refuse callers without it. The dashboard (jobs API) listens on
127.0.0.1 only, and Prometheus metrics export (unauthenticated by design) is switched off.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from gspo_cli import layout
from gspo_cli.errors import ClusterError
from gspo_cli.fsutil import atomic_write_json
from gspo_cli.jobs import auth
from gspo_cli.jobs.procs import kill_group, pid_alive, ray_executable

LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 90.0
# Unix socket paths are limited to 107 bytes; Ray appends ~70 characters to its temp dir.
MAX_TEMP_DIR_LEN = 36
# Logical CPUs a head for verl CPU runs declares (Ray oversubscribes): verl asks for bundles of
# {GPU: 1, CPU: 3} per device (max_colocate_count, verl/single_controller/ray/base.py) plus its TaskRunner,
# TransferQueue and reward-loop actors, more than a 2-core host's 2.
VERL_CPU_LOGICAL_CPUS = 16


@dataclass
class HeadRecord:
    address: str  # GCS address host:port, for `ray.init(address=...)`
    dashboard_url: str  # for the Jobs API
    pid: int  # the `ray start --block` process, leader of its process group
    temp_dir: str
    log_file: str
    started_at: float
    token_file: str | None = None
    # logical Ray "GPU" slots a verl CPU run places its workers on (engines/verl/cpu_platform.py); 0 = none
    device_slots: int = 0


def head_file() -> Path:
    return layout.ray_dir() / "head.json"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _temp_dir() -> Path:
    preferred = layout.ray_dir() / "tmp"
    if len(str(preferred)) <= MAX_TEMP_DIR_LEN:
        return preferred
    # $GSPO_HOME is too deep for Ray's socket paths: use a short per-home folder under /tmp instead.
    digest = hashlib.sha1(str(layout.gspo_home()).encode()).hexdigest()[:8]
    return Path("/tmp") / f"gspo-ray-{digest}"


def dashboard_alive(url: str, timeout: float = 2.0, token_file: str | None = None) -> bool:
    """Whether the jobs API answers (with the token, when the head wants one)."""
    token = auth.read_token(token_file)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{url}/api/version", headers=headers),
                                    timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def read_record() -> HeadRecord | None:
    path = head_file()
    if not path.is_file():
        return None
    try:
        return HeadRecord(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None


def running() -> HeadRecord | None:
    """The recorded head if its process is alive and its dashboard answers; stale records are removed."""
    record = read_record()
    if record is None:
        return None
    if record.token_file and pid_alive(record.pid) and dashboard_alive(record.dashboard_url,
                                                                        token_file=record.token_file):
        return record
    if not pid_alive(record.pid):
        head_file().unlink(missing_ok=True)
    return None


def start(*, num_cpus: int | None = None, quiet: bool = False, device_slots: int = 0) -> HeadRecord:
    """Start (or reuse) the embedded head and wait until its Jobs API answers. `device_slots`: the CPU "devices"
    a verl CPU run needs, offered as Ray GPU slots (`--num-gpus`; CPU torch ignores the CUDA_VISIBLE_DEVICES)."""
    existing = running()
    if existing is not None:
        if existing.device_slots < device_slots:
            raise ClusterError(
                f"the embedded Ray head runs with {existing.device_slots} CPU device slot(s); this verl CPU run "
                f"needs {device_slots}",
                "stop it with `gspo cluster down` once no job runs on it; the next command starts one with them")
        return existing
    stop()  # a recorded head that does not answer, or one from before token auth: gspo's own, replace it
    layout.ray_dir().mkdir(parents=True, exist_ok=True)
    gcs_port, dash_port = _free_port(), _free_port()
    temp_dir = _temp_dir()
    temp_dir.mkdir(parents=True, exist_ok=True)
    log_file = layout.ray_dir() / "head.log"
    cmd = [
        ray_executable(), "start", "--head", "--block", "--disable-usage-stats",
        f"--node-ip-address={LOOPBACK}", f"--port={gcs_port}",
        "--include-dashboard=true", f"--dashboard-host={LOOPBACK}", f"--dashboard-port={dash_port}",
        # Explicit free ports: two gspo homes (or a test and a user) on one machine must not collide.
        f"--dashboard-agent-listen-port={_free_port()}", f"--dashboard-agent-grpc-port={_free_port()}",
        f"--runtime-env-agent-port={_free_port()}", f"--metrics-export-port={_free_port()}",
        f"--ray-client-server-port={_free_port()}",
        f"--temp-dir={temp_dir}",
    ]
    if device_slots and num_cpus is None:
        num_cpus = max(os.cpu_count() or 1, VERL_CPU_LOGICAL_CPUS)
    if num_cpus is not None:
        cmd.append(f"--num-cpus={num_cpus}")
    if device_slots:
        cmd.append(f"--num-gpus={device_slots}")
    token_file = auth.write_new_token(auth.embedded_token_file())
    # No Prometheus exporter: it cannot take a token and would listen on the host's address.
    env = auth.server_env(dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_enable_metrics_collection="0"),
                          token_file)
    env.pop("RAY_ADDRESS", None)
    with open(log_file, "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
    record = HeadRecord(
        address=f"{LOOPBACK}:{gcs_port}", dashboard_url=f"http://{LOOPBACK}:{dash_port}", pid=proc.pid,
        temp_dir=str(temp_dir), log_file=str(log_file), started_at=time.time(), token_file=str(token_file),
        device_slots=device_slots,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ClusterError(
                f"the embedded Ray head exited during start (code {proc.returncode})",
                f"see {log_file}",
            )
        if dashboard_alive(record.dashboard_url, timeout=1.0, token_file=record.token_file):
            atomic_write_json(head_file(), asdict(record))
            return record
        time.sleep(0.5)
    kill_group(proc.pid)
    raise ClusterError(f"the embedded Ray head did not answer within {START_TIMEOUT_S:.0f} s", f"see {log_file}")


def stop() -> HeadRecord | None:
    """Stop the embedded head gspo started (its process group only). Returns what was stopped, or None."""
    record = read_record()
    if record is None:
        return None
    kill_group(record.pid)
    head_file().unlink(missing_ok=True)
    return record

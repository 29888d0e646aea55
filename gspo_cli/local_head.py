"""The embedded local Ray head: started by gspo on 127.0.0.1 when no cluster is named, recorded, reused, stopped.

gspo runs `ray start --head --block` as a child in its own process group and records it in
`$GSPO_HOME/ray/head.json`. `stop()` signals only that process group, so gspo never touches Ray processes it did
not start, and never deletes Ray's temp directory. Token auth is explicitly disabled on this loopback-only head
(the job client would otherwise pick up `~/.ray/auth_token` and fail to talk to it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from gspo_cli import paths
from gspo_cli.errors import ClusterError
from gspo_cli.fsutil import atomic_write_json

LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 90.0
# Unix socket paths are limited to 107 bytes; Ray appends ~70 characters to its temp dir.
MAX_TEMP_DIR_LEN = 36


@dataclass
class HeadRecord:
    address: str  # GCS address host:port, for `ray.init(address=...)`
    dashboard_url: str  # for the Jobs API
    pid: int  # the `ray start --block` process, leader of its process group
    temp_dir: str
    log_file: str
    started_at: float


def head_file() -> Path:
    return paths.ray_dir() / "head.json"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _temp_dir() -> Path:
    preferred = paths.ray_dir() / "tmp"
    if len(str(preferred)) <= MAX_TEMP_DIR_LEN:
        return preferred
    # $GSPO_HOME is too deep for Ray's socket paths: use a short per-home folder under /tmp instead.
    digest = hashlib.sha1(str(paths.gspo_home()).encode()).hexdigest()[:8]
    return Path("/tmp") / f"gspo-ray-{digest}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); reap it if it is ours.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def dashboard_alive(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/version", timeout=timeout) as resp:
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
    if _pid_alive(record.pid) and dashboard_alive(record.dashboard_url):
        return record
    if not _pid_alive(record.pid):
        head_file().unlink(missing_ok=True)
    return None


def client_env() -> None:
    """Make this process's Ray clients talk to the no-auth loopback head even if ~/.ray/auth_token exists."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def _ray_executable() -> str:
    candidate = Path(sys.executable).with_name("ray")
    if candidate.is_file():
        return str(candidate)
    found = shutil.which("ray")
    if not found:
        raise ClusterError("the `ray` command is not installed", "pip install 'ray[default]'")
    return found


def start(*, num_cpus: int | None = None, quiet: bool = False) -> HeadRecord:
    """Start (or reuse) the embedded head and wait until its Jobs API answers."""
    existing = running()
    if existing is not None:
        return existing
    paths.ray_dir().mkdir(parents=True, exist_ok=True)
    gcs_port, dash_port = _free_port(), _free_port()
    temp_dir = _temp_dir()
    temp_dir.mkdir(parents=True, exist_ok=True)
    log_file = paths.ray_dir() / "head.log"
    cmd = [
        _ray_executable(), "start", "--head", "--block", "--disable-usage-stats",
        f"--node-ip-address={LOOPBACK}", f"--port={gcs_port}",
        "--include-dashboard=true", f"--dashboard-host={LOOPBACK}", f"--dashboard-port={dash_port}",
        # Explicit free ports: two gspo homes (or a test and a user) on one machine must not collide.
        f"--dashboard-agent-listen-port={_free_port()}", f"--dashboard-agent-grpc-port={_free_port()}",
        f"--runtime-env-agent-port={_free_port()}", f"--metrics-export-port={_free_port()}",
        f"--ray-client-server-port={_free_port()}",
        f"--temp-dir={temp_dir}",
    ]
    if num_cpus is not None:
        cmd.append(f"--num-cpus={num_cpus}")
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    with open(log_file, "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
    record = HeadRecord(
        address=f"{LOOPBACK}:{gcs_port}", dashboard_url=f"http://{LOOPBACK}:{dash_port}", pid=proc.pid,
        temp_dir=str(temp_dir), log_file=str(log_file), started_at=time.time(),
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ClusterError(
                f"the embedded Ray head exited during start (code {proc.returncode})",
                f"see {log_file}",
            )
        if dashboard_alive(record.dashboard_url, timeout=1.0):
            atomic_write_json(head_file(), asdict(record))
            return record
        time.sleep(0.5)
    _kill_group(proc.pid)
    raise ClusterError(f"the embedded Ray head did not answer within {START_TIMEOUT_S:.0f} s", f"see {log_file}")


def _kill_group(pid: int, timeout: float = 20.0) -> None:
    try:
        pgid = os.getpgid(pid)
    except ProcessLookupError:
        return
    if pgid != pid:  # only a group we made (the ray start process leads it)
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _group_alive(pgid):
                return
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            time.sleep(0.2)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Members may all be zombies of ours; check /proc for live ones.
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 3 and fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def stop() -> HeadRecord | None:
    """Stop the embedded head gspo started (its process group only). Returns what was stopped, or None."""
    record = read_record()
    if record is None:
        return None
    _kill_group(record.pid)
    head_file().unlink(missing_ok=True)
    return record

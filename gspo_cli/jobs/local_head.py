"""The embedded local Ray head: started by gspo on 127.0.0.1 when no cluster is named, recorded, reused, stopped.

gspo runs `ray start --head --block` as a child in its own process group and records it in
`$GSPO_HOME/ray/head.json` with the process's identity (start time, command line). `stop()` signals only that
process group, and only while the recorded pid is still that process, so gspo never touches processes it did
not start, and never deletes Ray's temp directory. The head stops at once on SIGTERM (Ray's node drain off:
procs.no_drain_env).

Binding: the head runs in Ray's local-only mode (jobs/loopback.py), so its node address is 127.0.0.1 and every
port it and its workers open (GCS, raylet, object manager, agents, Ray Client server, jobs API) listens on
127.0.0.1 only. It also runs with token auth, its own new token each start (`$GSPO_HOME/ray/embedded_token`,
0600), against other users of this host: every gRPC port and the agents' HTTP ports refuse callers without it.
Ray's Prometheus exporters (unauthenticated by design) are switched off (jobs/exporters.py). A head recorded by
an older gspo (no `local_only` in its record) listens on every interface, guarded by its token only.

One head serves every engine's jobs: a job whose engine asks for resources the running head lacks (a verl CPU
run's GPU slots, engines/verl/cpu/head.py) gets the head restarted with them, added to what it had, when no job
runs on it; a head with a pending or running job is never restarted (the job is refused with how to proceed).
"""

from __future__ import annotations

import json
import os
import random
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from gspo_cli import layout
from gspo_cli.errors import ClusterError, ConfigError
from gspo_cli.fsutil import atomic_write_json
from gspo_cli.jobs import auth, exporters, loopback, procs
from gspo_cli.jobs.procs import RAY_READY_MARK, kill_group, ray_executable
from gspo_cli.jobs.resources import NodeResources

LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 90.0
# `ray start` exiting at once is retried on new ports (a port picked free can be taken before Ray binds it).
START_ATTEMPTS = 3
# Unix socket paths are limited to 107 bytes; Ray appends ~70 characters to its temp dir.
MAX_TEMP_DIR_LEN = 36
TEMP_PREFIX = "gspo-ray-"
RAY_SUBDIR = "ray"  # Ray's own temp dir inside gspo's private one


@dataclass
class HeadRecord:
    address: str  # GCS address host:port, for `ray.init(address=...)`
    dashboard_url: str  # for the Jobs API
    pid: int  # the `ray start --block` process, leader of its process group
    temp_dir: str
    log_file: str
    started_at: float
    token_file: str | None = None
    # the Ray resources it was started with beyond its cores (an engine's `node_resources`, e.g. the GPU slots of
    # a verl CPU run: engines/verl/cpu/head.py)
    resources: dict[str, float] = field(default_factory=dict)
    # what tells the process gspo started from a later one with the same pid (jobs/procs.identity), and the
    # command line gspo ran: `stop` signals the pid only while both still match
    identity: dict | None = None
    argv: list[str] | None = None
    # started in Ray's local-only mode (every port on 127.0.0.1, jobs/loopback.py); False in records of older gspo
    local_only: bool = False


def _legacy_args(record: HeadRecord) -> tuple[str, ...]:
    """For a record written before gspo recorded command lines: what this home's `ray start --head` holds."""
    return () if record.argv else ("start", "--head", "--block", f"--temp-dir={record.temp_dir}")


def is_ours(record: HeadRecord) -> bool:
    """Whether the record's pid is still the `ray start` gspo ran for it (a reused pid is someone else's)."""
    return procs.same_process(record.pid, record.identity, argv=record.argv, required=_legacy_args(record))


def head_file() -> Path:
    return layout.ray_dir() / "head.json"


# Ports for the head's servers come from below the kernel's ephemeral range: a port there is also handed to outgoing
# connections (a busy Ray host makes many), which can take it between our check and Ray's bind. Ray's worker ports
# are 10002-19999 by default, hence 20000 up.
PORT_FLOOR = 20000


def _ephemeral_floor() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def _free_port() -> int:
    """A port free now (Ray binds it a moment later: `start` retries when one was taken meanwhile)."""
    ceiling = _ephemeral_floor() - 1
    if ceiling > PORT_FLOOR:
        for _ in range(64):
            port = random.randint(PORT_FLOOR, ceiling)
            if _bindable(port):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _temp_dir(previous: str | None = None) -> Path:
    """Ray's temp dir for this head: private (0700, ours), never a predictable shared path."""
    from gspo_cli.private import ensure_private_dir

    ensure_private_dir(layout.ray_dir(), "Ray folder")
    return ray_temp_dir(layout.ray_dir() / "tmp", previous)


def ray_temp_dir(preferred: Path, previous: str | None = None) -> Path:
    """Ray's `--temp-dir`: `RAY_SUBDIR` inside a folder only this user can enter. Ray makes its temp dir 0777
    (for shared machines), so the protection is the private folder around it: `preferred` (made 0700) when Ray's
    socket paths fit under it, else a short one of our own in /tmp: the one this node used last time
    (`previous`, while still ours and private), or a new random one."""
    from gspo_cli.private import check_private_dir, ensure_private_dir, new_private_tempdir

    if len(str(preferred / RAY_SUBDIR)) <= MAX_TEMP_DIR_LEN:
        return ensure_private_dir(preferred, "Ray temp dir") / RAY_SUBDIR
    outer = Path(previous).parent if previous and Path(previous).name == RAY_SUBDIR else None
    if outer is not None and outer.name.startswith(TEMP_PREFIX) and os.path.lexists(outer):
        try:
            return check_private_dir(outer, "Ray temp dir") / RAY_SUBDIR
        except ConfigError:  # no longer ours or private: leave it, take a new one
            pass
    # $GSPO_HOME is too deep for Ray's socket paths (107 bytes): a short folder of our own, made fresh.
    return new_private_tempdir(TEMP_PREFIX) / RAY_SUBDIR


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
        data = json.loads(path.read_text())
        known = {f.name for f in fields(HeadRecord)}
        return HeadRecord(**{k: v for k, v in data.items() if k in known})  # a record of an older gspo reads too
    except (ValueError, TypeError, AttributeError):
        return None


def running() -> HeadRecord | None:
    """The recorded head if its process is alive and its dashboard answers; stale records are removed."""
    record = read_record()
    if record is None:
        return None
    ours = is_ours(record)
    if record.token_file and ours and dashboard_alive(record.dashboard_url, token_file=record.token_file):
        return record
    if not ours:  # gone, or its pid now belongs to another process: the record is stale either way
        head_file().unlink(missing_ok=True)
    return None


def start(*, num_cpus: int | None = None, quiet: bool = False, node: NodeResources | None = None) -> HeadRecord:
    """Start (or reuse) the embedded head and wait until its Jobs API answers. `node`: what the jobs' engine asks a
    node to offer (its spec's `node_resources`: e.g. a verl CPU run's CPU "devices" as Ray GPU slots). A running
    head that lacks some of it is restarted with it (and what it offered before) when no job runs on it, else
    refused."""
    node = node or NodeResources()
    existing = running()
    if existing is not None:
        lacking = node.missing_from(existing.resources)
        if not lacking:
            return existing
        _refuse_if_busy(existing, node, lacking)
        wanted = NodeResources(node.num_cpus, _union(existing.resources, node.resources), node.why)
        stop()
        record = _start_new(num_cpus, wanted, previous=existing)  # Ray's temp dir of the head it replaces
        from gspo_cli.console import err

        why = f" ({node.why})" if node.why else ""
        err.print(f"Restarted the embedded Ray head with {_spell(wanted.resources)}{why}; it ran no job.",
                  highlight=False)
        return record
    return _start_new(num_cpus, node)


# Ray's job states that still hold the head (ray/dashboard/modules/job/common.py JobStatus)
ACTIVE_STATES = ("PENDING", "RUNNING")


def active_jobs(record: HeadRecord) -> list[str] | None:
    """The jobs the head still runs (submitted jobs and drivers connected from other processes, as its jobs API
    lists them: PENDING or RUNNING), by id; None when the jobs API does not say."""
    token = auth.read_token(record.token_file)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{record.dashboard_url}/api/jobs/", headers=headers),
                                    timeout=10) as resp:
            jobs = json.loads(resp.read())
        return [str(j.get("submission_id") or j.get("job_id")) for j in jobs if j.get("status") in ACTIVE_STATES]
    except (urllib.error.URLError, OSError, ValueError, AttributeError, TypeError):
        return None


def _refuse_if_busy(record: HeadRecord, node: NodeResources, lacking: dict[str, float]) -> None:
    active = active_jobs(record)
    if active == []:
        return
    have = ", ".join(f"{k}={record.resources.get(k, 0):g}" for k in lacking)
    why = (f"it runs {len(active)} job(s) ({', '.join(active[:3])}{', ...' if len(active) > 3 else ''})"
           if active else "its jobs API did not list its jobs")
    raise ClusterError(
        f"the embedded Ray head runs with {have}; {node.why or 'this job'} needs {_spell(lacking)}, and {why}, so "
        "gspo does not restart it",
        "wait for its jobs to end or stop them (`gspo jobs list`, `gspo jobs stop ID`), then run this again: gspo "
        "restarts an idle head with what the job needs")


def _union(have: dict[str, float], want: dict[str, float]) -> dict[str, float]:
    return {**have, **{k: max(float(v), float(have.get(k, 0))) for k, v in want.items()}}


def _spell(resources: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in resources.items())


def _start_new(num_cpus: int | None, node: NodeResources, previous: HeadRecord | None = None) -> HeadRecord:
    previous = previous or read_record()
    stop()  # a recorded head that does not answer, or one from before token auth: gspo's own, replace it
    from gspo_cli.private import ensure_private_dir

    ensure_private_dir(layout.ray_dir(), "Ray folder")
    temp_dir = _temp_dir(previous.temp_dir if previous else None)
    log_file = layout.ray_dir() / "head.log"
    token_file = auth.write_new_token(auth.embedded_token_file())
    for attempt in range(1, START_ATTEMPTS + 1):
        proc, record, log_start = _launch(temp_dir, log_file, token_file, num_cpus, node)
        if _wait_until_up(proc, record, log_start):
            atomic_write_json(head_file(), asdict(record))
            return record
        reason = start_failure_reason(log_file, log_start)
        if attempt == START_ATTEMPTS:
            raise ClusterError(
                f"the embedded Ray head exited during start (code {proc.returncode}; {attempt} tries, each on new "
                f"ports)" + (f": {reason}" if reason else ""),
                f"see {log_file}",
            )
    raise AssertionError("unreachable")


def _launch(temp_dir: Path, log_file: Path, token_file: Path, num_cpus: int | None,
            node: NodeResources) -> tuple[subprocess.Popen, HeadRecord, int]:
    """One `ray start --head` on fresh ports; returns the process, its record and where its log output begins."""
    gcs_port, dash_port = _free_port(), _free_port()
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
    cmd += node.start_args(num_cpus=num_cpus)
    # No Prometheus exporters: they cannot take a token (jobs/exporters.py). Every port on 127.0.0.1
    # (jobs/loopback.py). A stop that does not wait for Ray's node drain (procs.no_drain_env).
    user_env = dict(os.environ)
    env = exporters.apply(dict(user_env, RAY_USAGE_STATS_ENABLED="0"), user_env=user_env)
    env = auth.server_env(procs.no_drain_env(loopback.server_env(env), user_env), token_file)
    env.pop("RAY_ADDRESS", None)
    with open(log_file, "ab") as log:
        log_start = log.tell()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
    record = HeadRecord(
        address=f"{LOOPBACK}:{gcs_port}", dashboard_url=f"http://{LOOPBACK}:{dash_port}", pid=proc.pid,
        temp_dir=str(temp_dir), log_file=str(log_file), started_at=time.time(), token_file=str(token_file),
        resources=dict(node.resources), identity=procs.identity(proc.pid), argv=cmd, local_only=True,
    )
    return proc, record, log_start


def _wait_until_up(proc: subprocess.Popen, record: HeadRecord, log_start: int = 0) -> bool:
    """True once `ray start` says its node is up and the Jobs API answers; False when `ray start` exits first; an
    error after START_TIMEOUT_S. The dashboard alone is not enough: on a busy host it answers while the raylet has
    yet to register, and `ray start` can still give up on it and stop the whole head a moment later."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if _started(record.log_file, log_start) and dashboard_alive(record.dashboard_url, timeout=1.0,
                                                                     token_file=record.token_file):
            return True
        time.sleep(0.5)
    kill_group(proc.pid)
    raise ClusterError(f"the embedded Ray head did not answer within {START_TIMEOUT_S:.0f} s",
                       f"see {record.log_file}")


def _started(log_file: str, offset: int) -> bool:
    try:
        with open(log_file, "rb") as log:
            log.seek(offset)
            return RAY_READY_MARK.encode() in log.read()
    except OSError:
        return False


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception): ")
_FAILURE_WORDS = ("error", "failed", "timed out", "address already in use")


def start_failure_reason(log_file: Path, offset: int = 0) -> str | None:
    """Why `ray start` failed, from its output after offset: the last exception line (with the line after it
    when it ends in a colon, as Ray's "Failed to start GCS. Last 1 lines of error files:" does), else the last
    line naming an error; shortened. None when the output says nothing."""
    try:
        with open(log_file, "rb") as log:
            log.seek(offset)
            lines = [" ".join(line.split()) for line in log.read().decode("utf-8", "replace").splitlines()]
    except OSError:
        return None
    lines = [line for line in lines if line]
    for i in range(len(lines) - 1, -1, -1):
        if _EXCEPTION_LINE.match(lines[i]):
            text = lines[i] + (f" {lines[i + 1]}" if lines[i].endswith(":") and i + 1 < len(lines) else "")
            return text[:300]
    found = next((line for line in reversed(lines) if any(w in line.lower() for w in _FAILURE_WORDS)), None)
    return found[:300] if found else None


def stop() -> HeadRecord | None:
    """Stop the embedded head gspo started (its process group only, and only while the recorded pid is still
    that process: `is_ours`). Returns what was stopped, or None. A record whose pid is gone or now another
    process's is removed without signalling anything."""
    record = read_record()
    if record is None:
        return None
    stopped = procs.stop_recorded_group(record.pid, record.identity, argv=record.argv,
                                        required=_legacy_args(record), ray_node=True)
    head_file().unlink(missing_ok=True)
    if not stopped and procs.pid_alive(record.pid):
        from gspo_cli.console import err

        err.print(f"[yellow]warning:[/] {head_file()} named pid {record.pid}, which is no longer the Ray head gspo "
                  "started (the pid was reused); removed the record, stopped nothing", highlight=False)
    return record if stopped else None

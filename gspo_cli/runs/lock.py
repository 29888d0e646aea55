"""One writer per run: `runs/<run>/run.lock` names the job that owns the run folder, and its host.

`gspo train` claims the lock before it writes anything into the run folder and before it submits the job
(`claim`); the job adopts it when it starts, adding its own pid (`adopt`), and removes it when it ends
(`release`). A second `gspo train` on the same run reads the lock and asks whether its holder is still alive:

- the job's pid, when the job runs on this host (a SIGKILLed job leaves its lock behind: the pid says it is gone);
- else the CLI that claimed it, while that CLI is still submitting or following on this host;
- else Ray, by the job id, on the cluster the lock names (PENDING / RUNNING is alive).

Alive: `train` refuses with one line (the job, how to follow it, how to stop it). Gone: the lock is taken over
and the run resumes from its newest checkpoint. Check and write happen under flock(2) on the run folder, so two
commands started at the same moment cannot both win.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gspo_cli.errors import GspoError
from gspo_cli.jobs.identity import JOB_ID_VAR, own_job_id  # noqa: F401 - the run lock's callers read them here
from gspo_cli.shell import quote

LOCK_FILE = "run.lock"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class RunBusyError(GspoError):
    """Another live job writes this run."""

    exit_code = 3


def lock_path(run_dir: Path) -> Path:
    return Path(run_dir) / LOCK_FILE


def read(run_dir: Path) -> dict[str, Any] | None:
    from gspo_cli import untrusted

    data = untrusted.read_mapping(lock_path(run_dir))  # size and depth limits: a run folder may be another's
    return data if data and data.get("job_id") else None


@contextlib.contextmanager
def _guard(run_dir: Path) -> Iterator[None]:
    """flock(2) on the run folder itself: the check and the write of the lock are one step for every process."""
    fd = os.open(run_dir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the flock


def _write(run_dir: Path, record: dict[str, Any]) -> None:
    from gspo_cli.fsutil import atomic_write_json

    atomic_write_json(lock_path(run_dir), record)


def _pid_alive(pid: Any, identity: Any = None) -> bool:
    """The recorded process is alive and is still the one that wrote the lock (jobs/procs.recorded_alive: its
    start time, not only its pid; an older lock without it: alive and a gspo process)."""
    from gspo_cli.jobs.procs import recorded_alive

    return recorded_alive(pid, identity if isinstance(identity, dict) else None)


def _identity() -> dict[str, Any] | None:
    from gspo_cli.jobs.procs import identity

    return identity(os.getpid())


def _ray_status(record: dict[str, Any], target: Any = None) -> tuple[str | None, str | None]:
    """Ray's status of the lock's job (PENDING, RUNNING, SUCCEEDED...), "MISSING", or None when Ray cannot be asked;
    and why it cannot (None when it was not asked: the lock names no cluster)."""
    url = record.get("dashboard_url")
    if not url:
        return None, None
    try:
        from gspo_cli.jobs.target import client, resolve_target

        if target is None or target.dashboard_url != url:
            target = resolve_target(url, start_local=False)
        info = client(target).get_job_info(record["job_id"])
    except Exception as exc:  # noqa: BLE001 - no such job says so (jobs/ray_errors.py); anything else: cannot tell, and why
        from gspo_cli.errors import first_line
        from gspo_cli.jobs import ray_errors

        if ray_errors.classify(exc).kind == ray_errors.NOT_FOUND:
            return "MISSING", None
        return None, getattr(exc, "message", None) or f"{type(exc).__name__}: {first_line(exc)}"
    return getattr(info.status, "value", str(info.status)), None


def holder_state(record: dict[str, Any], target: Any = None) -> str:
    """alive / gone / unknown for the job a lock names (see the module doc for the order of the checks)."""
    return holder(record, target)[0]


def holder(record: dict[str, Any], target: Any = None) -> tuple[str, str | None]:
    """`holder_state`, and why an unknown one could not be checked (Ray's answer), when it was asked."""
    here = record.get("host") == socket.gethostname()
    if record.get("job_pid") is not None and record.get("job_host") == socket.gethostname():
        return ("alive" if _pid_alive(record["job_pid"], record.get("job_identity")) else "gone"), None
    if here and _pid_alive(record.get("cli_pid"), record.get("cli_identity")):
        return "alive", None
    if str(record.get("job_id", "")).startswith("local-"):
        return ("gone" if here else "unknown"), None
    status, why = _ray_status(record, target)
    if status in ("PENDING", "RUNNING"):
        return "alive", None
    if status is not None:
        return "gone", None
    url = str(record.get("dashboard_url") or "")
    # An unreachable head on this host's loopback ran the job here, and it is gone with it.
    return ("gone", None) if here and any(f"//{h}:" in url for h in LOOPBACK) else ("unknown", why)


def busy_error(run_dir: Path, record: dict[str, Any], state: str, why: str | None = None) -> RunBusyError:
    job, host = record["job_id"], record.get("job_host") or record.get("host") or "?"
    if job.startswith("local-"):
        pid = record.get("job_pid") or record.get("cli_pid")
        return RunBusyError(f"run {run_dir.name} is being trained by an in-process job (pid {pid} on {host})",
                            f"wait for it or stop it (kill -INT {pid}); train another run with --run-name NAME")
    where = f" --address {quote(record['dashboard_url'])}" if record.get("dashboard_url") else ""
    unsure = "" if state == "alive" else f"; if that job is gone for good, delete {lock_path(run_dir)}"
    return RunBusyError(f"run {run_dir.name} is being trained by job {job} (on {host})"
                        + (", which cannot be checked now" if state == "unknown" else "")
                        + (f" ({why})" if state == "unknown" and why else ""),
                        f"follow it: gspo jobs logs {quote(job)} --follow{where}; stop it: gspo jobs stop {quote(job)}{where}"
                        f"{unsure}")


def claim(run_dir: Path, job_id: str, *, engine: str, dashboard_url: str | None = None,
          target: Any = None) -> dict[str, Any] | None:
    """Take the run for `job_id` (before anything is written or submitted). Raises RunBusyError while another
    job holds it; returns the record of a dead holder taken over (None when the run was free)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with _guard(run_dir):
        previous = read(run_dir)
        if previous is not None and previous["job_id"] != job_id:
            state, why = holder(previous, target)
            if state != "gone":
                raise busy_error(run_dir, previous, state, why)
        _write(run_dir, {"job_id": job_id, "engine": engine, "host": socket.gethostname(), "cli_pid": os.getpid(),
                         "cli_identity": _identity(), "dashboard_url": dashboard_url, "claimed": time.time()})
    return previous if previous is not None and previous["job_id"] != job_id else None


def rename_job(run_dir: Path, old: str, new: str) -> None:
    """Ray gave the job another id than the one claimed (a `-2` suffix): the lock follows."""
    with _guard(Path(run_dir)):
        record = read(run_dir)
        if record is not None and record["job_id"] == old:
            _write(run_dir, {**record, "job_id": new})


def adopt(run_dir: Path, engine: str) -> None:
    """In the job, before it writes: the lock names this job (add its pid and host), or its holder is gone (take
    it over). A job started by hand on a run another live job holds refuses here."""
    run_dir = Path(run_dir)
    me = own_job_id()
    with _guard(run_dir):
        record = read(run_dir)
        if record is not None and record["job_id"] != me:
            state, why = holder(record)
            if state != "gone":
                raise busy_error(run_dir, record, state, why)
            record = None
        base = record or {"job_id": me, "engine": engine, "host": socket.gethostname(), "claimed": time.time()}
        _write(run_dir, {**base, "job_pid": os.getpid(), "job_identity": _identity(), "job_host": socket.gethostname(),
                         "started": time.time()})


def release(run_dir: Path, job_id: str | None = None) -> None:
    """Remove the lock if it is still `job_id`'s (default: this process's job)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return
    me = job_id or own_job_id()
    with _guard(run_dir):
        record = read(run_dir)
        if record is not None and record["job_id"] == me:
            lock_path(run_dir).unlink(missing_ok=True)


def live_holder(run_dir: Path) -> dict[str, Any] | None:
    """The lock's record while its job is alive (or cannot be checked), else None: for `runs show` / `runs list`."""
    record = read(Path(run_dir))
    if record is None:
        return None
    return record if holder_state(record) != "gone" else None


class LockClaim:
    """The run lock as a job's claim (jobs/jobspec.py `RunClaim`): `claim` before anything is submitted (then
    `on_taken(target, job_id)`: write the run folder; a dead holder taken over is said with `takeover`), follow
    Ray's id, release when the run folder could not be written or Ray never got the job (a job that ran releases
    it itself: runs/state.run_tracked)."""

    def __init__(self, run_dir: Path, engine: str, *, on_taken: Callable[[Any, str], None] | None = None,
                 takeover: str = "") -> None:
        self.run_dir, self.engine, self.on_taken, self.takeover = Path(run_dir), engine, on_taken, takeover

    def take(self, target: Any, job_id: str) -> None:
        taken = claim(self.run_dir, job_id, engine=self.engine, target=target,
                      dashboard_url=target.dashboard_url if target is not None else None)
        if taken is not None:
            from gspo_cli.console import err

            err.print(f"Run {self.run_dir.name}: its job {taken['job_id']} is gone; taking the run over"
                      f"{' (' + self.takeover + ')' if self.takeover else ''}.", highlight=False)
        if self.on_taken is not None:
            try:
                self.on_taken(target, job_id)
            except BaseException:
                release(self.run_dir, job_id)  # nothing runs: the run is free again
                raise

    def submitted(self, claimed: str, actual: str) -> None:
        if actual != claimed:
            rename_job(self.run_dir, claimed, actual)

    def refused(self, claimed: str) -> None:
        release(self.run_dir, claimed)

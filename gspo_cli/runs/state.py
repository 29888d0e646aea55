"""`runs/<run>/job_state.json`: what the training job says about itself, for `gspo runs list` without Ray.

The job writes `running` (with its pid and host) when it starts and `succeeded` / `failed` (with the error line)
when it ends; the job wrapper's verdict on a failed attempt (`note_failure`: kind `config` / `fatal` / `stopped` /
`transient` / `capacity` of jobs/failures.py, and the cause line) is kept in the final record, so `gspo runs show`
says why a run failed and whether running it again can help. A job killed outright (SIGKILL, a lost node) never writes its end: a `running` state whose pid is
gone on this host reads as `killed`. On another host the pid cannot be checked, and the state is shown as the
job left it.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gspo_cli.jobs.procs import identity, recorded_alive

STATE_FILE = "job_state.json"


def _write(run_dir: Path, **fields: Any) -> None:
    from gspo_cli.fsutil import atomic_write_json

    atomic_write_json(run_dir / STATE_FILE, {**fields, "updated": time.time()})


def read(run_dir: Path) -> dict[str, Any] | None:
    from gspo_cli import untrusted

    return untrusted.read_mapping(run_dir / STATE_FILE)  # size and depth limits: a run folder may be another's


def note_failure(run_dir: Path, kind: str, cause: str) -> None:
    """Record why the job is failing (the wrapper's classification), kept when the job writes how it ended."""
    record = read(run_dir) or {}
    record.pop("updated", None)
    _write(run_dir, **{**record, "failure_kind": kind, "error": (cause or "").splitlines()[0][:300] if cause else ""})


def run_tracked(run_dir: Path, engine: str, fn: Callable[[], int]) -> int:
    """Run the training function, recording running -> succeeded / failed (exit code or error) around it.

    The run's lock (`runs.lock`) is adopted first, so a job started on a run another live job writes refuses before
    it touches anything, and released at the end (a killed job's lock is taken over by the next `gspo train`)."""
    from gspo_cli.runs import lock

    lock.adopt(run_dir, engine)
    try:
        return _tracked(run_dir, engine, fn)
    finally:
        lock.release(run_dir)


def _tracked(run_dir: Path, engine: str, fn: Callable[[], int]) -> int:
    base = {"engine": engine, "pid": os.getpid(), "identity": identity(os.getpid()), "host": socket.gethostname(),
            "started": time.time()}
    _write(run_dir, status="running", **base)
    try:
        code = int(fn() or 0)
    except BaseException as exc:
        # Ctrl-C, or SIGTERM (`gspo jobs stop`), which the job wrapper turns into SystemExit(128 + 15)
        stopped = isinstance(exc, KeyboardInterrupt) or (isinstance(exc, SystemExit) and exc.code in (130, 143))
        if stopped:  # say by what: the status already says "stopped"
            message = ("interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt)
                       else "terminated (SIGTERM: gspo jobs stop, or ray job stop)")
        else:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        status = "stopped" if stopped else "failed"
        _write(run_dir, status=status, error=message.splitlines()[0][:300] if message else "", **base)
        raise
    noted = {}
    if code != 0:  # the wrapper's verdict (note_failure), if it gave one
        noted = {k: v for k, v in (read(run_dir) or {}).items() if k in ("failure_kind", "error") and v}
    _write(run_dir, status="succeeded" if code == 0 else "failed", exit_code=code, **noted, **base)
    return code


def live_status(state: dict[str, Any] | None) -> str | None:
    """running / killed / succeeded / failed / stopped from the job's own record; None when there is none."""
    if not state:
        return None
    status = str(state.get("status") or "")
    if status != "running":
        return status or None
    if state.get("host") == socket.gethostname() and isinstance(state.get("pid"), int):
        ident = state.get("identity")
        return "running" if recorded_alive(state["pid"], ident if isinstance(ident, dict) else None) else "killed"
    return "running"

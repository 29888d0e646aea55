"""Processes gspo starts and stops itself: the `ray` executable, liveness, and killing only our own group.

gspo runs `ray start --block` in a new session so that the process it started leads a process group; stopping
signals that group and nothing else (never other users' Ray processes, never Ray's temp directory).

A pid in a record (head.json, a node record, run.lock, job_state.json) is acted on only while it is still the
process gspo started: `identity(pid)` (the boot id and the process's start time, from /proc) is recorded with the
pid, and `same_process` compares both, plus the command line gspo ran, before anything is signalled. A pid reused
after a reboot or by another program never matches (`stop_recorded_group`).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from gspo_cli.errors import ClusterError

# What `ray start` prints once its node is up (the raylet registered with the GCS); before it, `ray start` can still
# fail ("The current node timed out during startup", a busy host) and take the whole node with it.
RAY_READY_MARK = "Ray runtime started"


def ray_executable() -> str:
    """The `ray` next to this interpreter (the venv's), else the one on PATH."""
    candidate = Path(sys.executable).with_name("ray")
    if candidate.is_file():
        return str(candidate)
    found = shutil.which("ray")
    if not found:
        raise ClusterError("the `ray` command is not installed", "pip install 'ray[default]'")
    return found


def pid_alive(pid: int) -> bool:
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


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process of the group is left (zombies of an exited parent linger until reaped)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 3 and fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def children(pid: int | None = None) -> set[int]:
    """Direct children of `pid` (this process by default), from /proc; empty where there is no /proc."""
    parent = os.getpid() if pid is None else pid
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 1 and int(fields[1]) == parent:
            found.add(int(entry.name))
    return found


def kill_new_children(before: set[int]) -> list[int]:
    """SIGKILL the children this process started since `before` was taken (what a failed start left running)."""
    new = sorted(children() - before)
    for pid in new:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    return new


def kill_group(pid: int, timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL, the process group that `pid` leads; a no-op if `pid` leads no group."""
    try:
        pgid = os.getpgid(pid)
    except ProcessLookupError:
        return
    if pgid != pid:  # only a group we made (the process we started leads it)
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        if _group_ended(pid, wait):
            return


def _group_ended(pid: int, wait: float) -> bool:
    """Whether the group `pid` leads is gone within `wait` seconds (reaping `pid` if it is our child)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not group_alive(pid):
            return True
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.2)
    return False


# Ray 2.60's `ray start --block` answers SIGTERM by first asking the GCS to drain its node and waiting until the
# raylet exits on its own, for up to RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S (default 30 s; ray/_private/node.py
# `_drain_node_before_shutdown`, made for Kubernetes pods of Ray Serve). An idle raylet with leased workers, or
# any running job, keeps it waiting: `gspo cluster down` took 13.8-20.6 s (the rest of stop_ray_node's 20 s
# timeout, then SIGKILL). gspo's stop means now; nothing it runs drains: 0 turns the drain off, and Ray then
# stops its processes as before (SIGTERM each, raylet first, 1 s grace each). A value the user set is kept.
DRAIN_VAR = "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"


def no_drain_env(env: dict[str, str], user_env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` for a `ray start --block` that stops at once on SIGTERM (DRAIN_VAR 0, unless `user_env` names it)."""
    return {**env, DRAIN_VAR: (user_env or {}).get(DRAIN_VAR) or "0"}


def stop_ray_node(pid: int, timeout: float = 20.0) -> None:
    """Stop a `ray start --block` that leads its own process group (the embedded head, a `gspo cluster up/join`
    node): SIGTERM to it alone first, so Ray stops its node's processes in its own order, raylet before GCS; then
    kill_group for whatever is left after `timeout`. A SIGTERM to the whole group at once ends the GCS first, and
    the raylet then retries it for ~30 s until it gives up or gets SIGKILL. A no-op if `pid` leads no group."""
    try:
        if os.getpgid(pid) != pid:
            return
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not _group_ended(pid, timeout):
        kill_group(pid, timeout=5.0)


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def identity(pid: int) -> dict[str, Any] | None:
    """What tells this process from any later one with the same pid: this boot's id and the process's start time
    (clock ticks after boot, field 22 of /proc/<pid>/stat). None when the process is gone or there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
        start = int(fields[19])
    except (OSError, ValueError, IndexError):
        return None
    return {"boot_id": _boot_id(), "start_ticks": start}


def command_line(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0")[:-1]] if raw else []


def _runs(cmdline: list[str], argv: list[str]) -> bool:
    """Whether `cmdline` (from /proc) is `argv` as exec'd: the same arguments after the program, and the program
    itself or, for a script such as `ray`, its interpreter followed by it."""
    if not argv or len(cmdline) < len(argv) or cmdline[len(cmdline) - len(argv) + 1:] != list(argv[1:]):
        return False
    program = Path(argv[0]).name
    return any(Path(part).name == program for part in cmdline[:len(cmdline) - len(argv) + 1])


def same_process(pid: Any, recorded: dict[str, Any] | None, *, argv: list[str] | None = None,
                 required: tuple[str, ...] = ()) -> bool:
    """Whether `pid` is still the process a record names: its identity (boot id + start time) equals the recorded
    one, and its command line is `argv` (or holds every `required` argument, for records written before gspo
    recorded identities). A record with neither identity nor command line can never be verified: False."""
    if not isinstance(pid, int) or pid <= 0 or not pid_alive(pid):
        return False
    now = identity(pid)
    if recorded:
        if now is None or now != {"boot_id": recorded.get("boot_id"), "start_ticks": recorded.get("start_ticks")}:
            return False
    elif not (argv or required):
        return False
    if argv or required:
        cmdline = command_line(pid)
        if cmdline is None:
            return False
        if argv and not _runs(cmdline, argv):
            return False
        if required and not all(r in cmdline for r in required):
            return False
    return True


def stop_recorded_group(pid: int, recorded: dict[str, Any] | None, *, argv: list[str] | None = None,
                        required: tuple[str, ...] = (), ray_node: bool = False, timeout: float = 20.0) -> bool:
    """`kill_group(pid)` only while `pid` is still the process the record names (`same_process`); True when it
    was (and is now stopped), False when the record names a process that is gone or is not gspo's."""
    if not same_process(pid, recorded, argv=argv, required=required):
        return False
    if ray_node:  # a `ray start --block` leading its group: Ray's own stop order first (stop_ray_node)
        stop_ray_node(pid, timeout=timeout)
    else:
        kill_group(pid, timeout=timeout)
    return True


def recorded_alive(pid: Any, recorded: dict[str, Any] | None) -> bool:
    """A liveness check for records of gspo's own processes (run.lock, job_state.json): the same process while an
    identity was recorded, else (an older record) alive and still a gspo process."""
    if not isinstance(pid, int):
        return False
    return same_process(pid, recorded) if recorded else gspo_process_alive(pid)


def gspo_process_alive(pid: int) -> bool:
    """pid alive and still a gspo process: a recycled pid belongs to some other program (/proc/<pid>/cmdline)."""
    from pathlib import Path

    if not pid_alive(pid):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            return b"gspo" in cmdline.read_bytes()
        except OSError:
            return True
    return True

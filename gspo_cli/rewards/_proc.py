"""Worker processes started as `python -c ...` with a socket to the parent.

Not multiprocessing's spawn/forkserver: those re-import the parent's `__main__`, which under Ray or verl is
a worker script that must not run twice, and fork is unsafe in threaded parents. A fresh interpreter that
imports only `gspo_cli.rewards` is cheap and safe everywhere.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Any


class Child:
    """A worker process and the parent's end of its duplex pickle connection."""

    def __init__(self, target: str, *args: Any) -> None:
        parent_sock, child_sock = socket.socketpair()
        fd = child_sock.fileno()
        code = (
            "import sys; from gspo_cli.rewards._proc import child_main; "
            f"child_main({fd}, {target!r}, {json.dumps(list(args))!r})"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            close_fds=True,
            env=_child_env(),
        )
        child_sock.close()
        self.conn = Connection(parent_sock.detach())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass

    def close(self, timeout: float = 2.0) -> None:
        """Ask the worker to exit (it reads None), kill it if it does not."""
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def _child_env() -> dict:
    """The parent's environment, plus the folder gspo_cli is imported from (it may be on sys.path only)."""
    import os
    from pathlib import Path

    import gspo_cli

    env = dict(os.environ)
    root = str(Path(gspo_cli.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def child_main(fd: int, target: str, args_json: str) -> None:  # pragma: no cover - runs in the worker
    import importlib

    mod, _, fn = target.partition(":")
    conn = Connection(fd)
    try:
        getattr(importlib.import_module(mod), fn)(conn, *json.loads(args_json))
    finally:
        conn.close()
    sys.exit(0)

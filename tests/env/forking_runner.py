"""One Python that imports the heavy modules once (verl, torch, Ray: ~5 s of CPU per import on a CI core) and runs
each command it is sent in a fresh child forked from itself, so a test that runs the same command for many rows
(tests/env/simulated_cluster.py: a dry-run and verl's placement per preset) pays the import once, not per row.

    python forking_runner.py MODULE...    (started with the exact environment the commands get; see `Runner`)

Each child is what `python -m MOD ARGS` (or `python SCRIPT ARGS`) would be in that environment, its imports already
done: its own process, stdin /dev/null, stdout and stderr to files, `sys.argv` and `sys.path[0]` as Python sets them,
the script run as __main__, and the interpreter's own exit (non-daemon threads joined, atexit handlers such as
ray.shutdown, the exit code of SystemExit or 1 with the traceback). Nothing a child does reaches the parent or the next
child. The parent only imports: MODULE... are modules the commands themselves import first, with no argument, so a
fresh process would import them in the same environment to the same state.

Requests are JSON lines on stdin ({"module": M} or {"script": PATH}, "argv", "timeout"); each answer is one JSON line
(returncode, or "timeout": true after the child was killed) with the child's output in the files the request names.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _child(req: dict) -> None:
    """In the forked child: become `python [-m] TARGET ARGV...` and exit as it would. Never returns."""
    code = 1
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, fd)
            os.close(out)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 (the process's own fds, closed by os._exit)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        if "module" in req:
            sys.argv = [req["module"], *req["argv"]]
            sys.path[0] = os.getcwd()  # what `python -m` puts first
            runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
        else:
            sys.argv = [req["script"], *req["argv"]]
            sys.path[0] = str(Path(req["script"]).resolve().parent)  # what `python SCRIPT` puts first
            runpy.run_path(req["script"], run_name="__main__")
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # the interpreter prints an uncaught exception's traceback and exits 1
        sys.excepthook(*sys.exc_info())
        code = 1
    try:
        threading._shutdown()  # type: ignore[attr-defined]  # as Py_Finalize: join non-daemon threads
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _serve() -> None:
    for module in sys.argv[1:]:
        importlib.import_module(module)
    answers = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)
        deadline = time.monotonic() + float(req["timeout"])
        status = None
        while status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
            elif time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            else:
                time.sleep(0.05)
        answer = {"timeout": True} if status is None else {"returncode": os.waitstatus_to_exitcode(status)}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


class Runner:
    """The test side: a forking runner started with `env` and `cwd`, its `preload` imported once; `run` sends one
    command and returns what `subprocess.run(..., capture_output=True, text=True)` would. Use as a context manager
    (the runner ends with it)."""

    def __init__(self, env: dict[str, str], cwd: Path, preload: tuple[str, ...]):
        self.env, self.cwd, self.preload = env, cwd, preload
        self.proc: subprocess.Popen | None = None
        self.dir = Path(tempfile.mkdtemp(prefix="forking-runner-"))

    def __enter__(self) -> Runner:
        self.proc = subprocess.Popen([sys.executable, __file__, *self.preload], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=self.env, cwd=self.cwd)
        return self

    def __exit__(self, *exc) -> None:
        assert self.proc is not None
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in self.dir.iterdir():
            f.unlink()
        self.dir.rmdir()

    def run(self, argv: list[str], *, module: str | None = None, script: str | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        assert self.proc is not None and (module is None) != (script is None)
        out, err = self.dir / "stdout", self.dir / "stderr"
        req = {"argv": argv, "timeout": timeout, "stdout": str(out), "stderr": str(err),
               **({"module": module} if module else {"script": script})}
        self.proc.stdin.write(json.dumps(req) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        assert line, f"the forking runner ended (exit {self.proc.poll()}) on {argv}"
        answer = json.loads(line)
        cmd = [sys.executable, *(["-m", module] if module else [str(script)]), *argv]
        if answer.get("timeout"):
            raise subprocess.TimeoutExpired(cmd, timeout)
        return subprocess.CompletedProcess(cmd, answer["returncode"], out.read_text(errors="replace"),
                                           err.read_text(errors="replace"))


if __name__ == "__main__":
    _serve()

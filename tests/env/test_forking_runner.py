"""The forking runner (forking_runner.py) that the simulated-cluster tests run their per-row dry-runs and placement
drivers in: each command it runs must end as the same command in a fresh `python` does (exit code, stdout, stderr,
argv, sys.path[0], stdin, atexit, non-daemon threads, a timeout), and nothing one child does may reach the next."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from forking_runner import Runner

SCRIPT = '''
import atexit, json, os, sys, threading, time
import marker_mod
mode = sys.argv[1]
print(json.dumps({"argv": sys.argv[1:], "path0": sys.path[0], "stdin": sys.stdin.read(), "name": __name__,
                  "seen": getattr(marker_mod, "seen", None), "env": os.environ.get("RUNNER_ENV")}))
marker_mod.seen = mode  # a fresh process never sees a value an earlier run set
atexit.register(lambda: print("atexit ran", flush=True))
if mode == "thread":  # the interpreter waits for a non-daemon thread before it exits
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread done", flush=True))).start()
elif mode == "exit3":
    sys.exit(3)
elif mode == "exitmsg":
    sys.exit("a message")
elif mode == "raise":
    raise RuntimeError("boom")
elif mode == "sleep":
    time.sleep(30)
print("to stderr", file=sys.stderr)
'''
MODES = ["ok", "thread", "exit3", "exitmsg", "raise"]


@pytest.fixture
def setup(tmp_path):
    (tmp_path / "marker_mod.py").write_text("")
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "RUNNER_ENV": "yes"}
    return tmp_path, script, env


def _fresh(script: Path, mode: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=60)


def _same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    assert (a.returncode, a.stdout) == (b.returncode, b.stdout)
    # a traceback names the frames that ran the script: runpy's in the runner, none in a fresh python
    assert a.stderr.splitlines()[-1:] == b.stderr.splitlines()[-1:], (a.stderr, b.stderr)


def test_a_forked_run_ends_as_a_fresh_python_does(setup):
    tmp, script, env = setup
    with Runner(env, tmp, ("marker_mod", "json")) as runner:
        for mode in MODES:
            _same(runner.run([mode], script=str(script), timeout=60), _fresh(script, mode, env, tmp))


def test_a_module_run_gets_the_argv_and_path_of_python_m(setup):
    tmp, script, env = setup
    (tmp / "pkgx").mkdir()
    (tmp / "pkgx" / "__main__.py").write_text("import sys; print(sys.argv[1:], sys.path[0]); sys.exit(4)")
    fresh = subprocess.run([sys.executable, "-m", "pkgx", "a", "b"], capture_output=True, text=True, env=env, cwd=tmp)
    with Runner(env, tmp, ()) as runner:
        _same(runner.run(["a", "b"], module="pkgx"), fresh)
    assert fresh.returncode == 4


def test_a_run_past_its_timeout_is_killed_and_raises(setup):
    tmp, script, env = setup
    with Runner(env, tmp, ()) as runner:
        with pytest.raises(subprocess.TimeoutExpired):
            runner.run(["sleep"], script=str(script), timeout=1)
        _same(runner.run(["ok"], script=str(script), timeout=60), _fresh(script, "ok", env, tmp))  # still serves


def test_the_control_a_preload_that_changes_state_is_told_apart(setup):
    """The comparison can fail: a preloaded module that changes what the command sees (here the environment; a
    runner whose parent ran the commands itself would leak `seen` the same way) gives a run unlike a fresh python."""
    tmp, script, env = setup
    (tmp / "leaky_mod.py").write_text("import os; os.environ['RUNNER_ENV'] = 'changed'")
    with Runner(env, tmp, ("leaky_mod",)) as runner:
        with pytest.raises(AssertionError):
            _same(runner.run(["ok"], script=str(script)), _fresh(script, "ok", env, tmp))

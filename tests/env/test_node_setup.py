"""The preset's open-files limit: raised before `ray start` (inherited by its children), checked by doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

RAISE_THEN_SPAWN = """
import subprocess, sys
from gspo_cli.env.node_setup import raise_nofile
change = raise_nofile(int(sys.argv[1]))
child = subprocess.run(["sh", "-c", "ulimit -Sn"], capture_output=True, text=True).stdout.strip()
print(change.before, change.after, change.raised, child)
"""


def _in_shell(limit: int, *args: str) -> subprocess.CompletedProcess:
    """Run `args` in a bash whose soft open-files limit is `limit` (as a user's login shell might be)."""
    cmd = " ".join(f"'{a}'" for a in args)
    return subprocess.run(["bash", "-c", f"ulimit -Sn {limit} && exec {cmd}"], capture_output=True, text=True,
                          env={**os.environ}, timeout=120)


def test_raise_nofile_reaches_child_processes():
    res = _in_shell(1024, sys.executable, "-c", RAISE_THEN_SPAWN, "4096")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["1024", "4096", "True", "4096"]
    # never lowers a higher limit
    res = _in_shell(4096, sys.executable, "-c", RAISE_THEN_SPAWN, "2048")
    assert res.stdout.split() == ["4096", "4096", "False", "4096"]


def test_raise_nofile_without_a_preset_limit_does_nothing():
    from gspo_cli.env.node_setup import raise_nofile

    assert raise_nofile(None) is None


@pytest.mark.slow
def test_doctor_fails_on_a_low_open_files_limit_with_the_fix():
    res = _in_shell(1024, sys.executable, "-m", "gspo_cli", "env", "doctor", "--preset", "qwen3-32b", "--json")
    data = json.loads(res.stdout)
    row = next(c for c in data["checks"] if c["name"] == "node.nofile")
    assert row["status"] == "error" and row["message"].startswith("ulimit -n 1024 (hard ")
    assert "below the preset's 32768" in row["message"] and "ulimit -n 32768" in row["fix"]
    assert res.returncode == 1
    print(row)
    res = _in_shell(2048, sys.executable, "-m", "gspo_cli", "env", "doctor", "--preset", "qwen3-32b", "--json",
                    "--set", "env.nofile=2048")
    row = next(c for c in json.loads(res.stdout)["checks"] if c["name"] == "node.nofile")
    assert row["status"] == "ok" and row["message"].startswith("ulimit -n 2048")


HARD_CAPPED = """
import resource, sys
from gspo_cli.env.node_setup import raise_nofile
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
change = raise_nofile(hard + 1000)
print(change.after == min(hard + 1000, resource.getrlimit(resource.RLIMIT_NOFILE)[1]), change.short or change.after >= hard + 1000)
"""


def test_raise_nofile_stops_at_the_hard_limit_and_says_so():
    res = _in_shell(1024, sys.executable, "-c", HARD_CAPPED)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "True"]

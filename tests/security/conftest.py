"""Helpers of the security probes: run the real `gspo` from any working directory."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]


def _cap_memory(limit: int):
    def apply():  # in the child: at most `limit` bytes of address space (a YAML bomb fails instead of filling RAM)
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def run_in(*args: str, cwd=None, env: dict[str, str] | None = None, timeout: float = 120, input: str | None = None,
           max_memory: int | None = None):
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "gspo_cli", *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout, input=input, cwd=cwd or REPO,
                          preexec_fn=_cap_memory(max_memory) if max_memory else None)


@pytest.fixture
def gspo_at():
    return run_in

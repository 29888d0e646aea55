"""The failure-signature catalog: complete entries, detectors that exist, the generated docs page up to date,
and `gspo env doctor --explain` through the real CLI."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from gspo_cli import signatures

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("sig", signatures.CATALOG, ids=lambda s: s.id)
def test_every_signature_is_complete_and_its_detector_exists(sig):
    assert sig.stage in signatures.STAGES
    assert sig.detection and sig.message and sig.fix and sig.sources
    module, func = sig.detector.split(":")
    assert callable(getattr(importlib.import_module(module), func))
    if sig.stage == "run":
        assert sig.action in ("warn", "restart", "stop", "fail")


def test_ids_are_unique_and_every_stage_has_entries():
    assert len(signatures.BY_ID) == len(signatures.CATALOG)
    assert all(n > 0 for n in signatures.counts().values())


def test_failures_page_is_generated_from_the_catalog():
    spec = importlib.util.spec_from_file_location("gen_failures", REPO / "docs" / "gen_failures.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = (REPO / "docs" / "failures.md").read_text(encoding="utf-8")
    assert committed == gen.render(), "docs/failures.md is out of date: run python docs/gen_failures.py > docs/failures.md"


def test_doctor_explain_prints_one_signature(tmp_path):
    env = {"PYTHONPATH": str(REPO), "GSPO_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-m", "gspo_cli", "env", "doctor", "--explain", "gspo-bypass-mode"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "apply_bypass_mode" in res.stdout and "https://github.com/verl-project/verl/pull/3694" in res.stdout
    bad = subprocess.run([sys.executable, "-m", "gspo_cli", "env", "doctor", "--explain", "no-such-id"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "gspo-token-mean" in bad.stderr and "Traceback" not in bad.stderr

"""Shared fixtures for the native engine tests: a GSPO_HOME with the tiny model built once, arith parquet."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from native_helpers import QUICK_SETS, write_arith


@pytest.fixture(scope="session")
def gspo_home(tmp_path_factory) -> Path:
    """One GSPO_HOME for the session (the tiny model is built once into it)."""
    home = tmp_path_factory.mktemp("gspo_home")
    old = os.environ.get("GSPO_HOME")
    os.environ["GSPO_HOME"] = str(home)
    from gspo_cli.models.tiny import ensure_tiny_model

    ensure_tiny_model()
    yield home
    if old is None:
        os.environ.pop("GSPO_HOME", None)
    else:
        os.environ["GSPO_HOME"] = old


@pytest.fixture
def workspace(gspo_home, tmp_path) -> dict:
    """Per-test data and runs folders (via the preset's paths section) with prepared arith data."""
    data, runs = tmp_path / "data", tmp_path / "runs"
    write_arith(data)
    sets = [f"paths.data_dir={data}", f"paths.runs_dir={runs}", *QUICK_SETS]
    return {"home": gspo_home, "data": data, "runs": runs, "sets": sets}

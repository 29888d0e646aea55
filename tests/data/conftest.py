"""Fixtures of the data tests: a DAPO-shaped raw file and the reference preset pointed at a temp data folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_factories import dapo_fixture_rows, write_dapo


@pytest.fixture
def dapo_file(tmp_path) -> Path:
    return write_dapo(tmp_path / "dapo-math-17k.parquet", dapo_fixture_rows(), row_group_size=16)


@pytest.fixture
def qwen_preset(tmp_path):
    """The reference preset with its data folder in tmp."""
    from gspo_cli.config.presets import load_preset

    def make(*sets: str):
        return load_preset("qwen3-32b", [f"paths.data_dir={tmp_path / 'data'}", *sets])

    return make

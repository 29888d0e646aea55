"""GSPO_FAULT parsing and firing rules (the faults themselves run in tests/engines/native/test_health_faults.py)."""

from __future__ import annotations

import math

import pytest

from gspo_cli.engines.native.faults import Fault, Injector, parse
from gspo_cli.errors import ConfigError


def test_parse_kinds_and_steps():
    assert parse("crash@3, slow@5") == [Fault("crash", 3), Fault("slow", 5)]
    assert parse(None) == [] and parse("") == []
    for bad in ("boom@3", "crash", "crash@0", "crash@x"):
        with pytest.raises(ConfigError, match="is not KIND@STEP"):
            parse(bad)


def test_crash_and_hang_fire_once_per_run_folder_nan_every_time(tmp_path):
    first = Injector(tmp_path, "crash@3,hang@5,nan@2")
    assert first._at("crash", 3) and not first._at("crash", 4) and first._at("hang", 5)
    restarted = Injector(tmp_path, "crash@3,hang@5,nan@2")  # the trainer after a restart: same run folder
    assert not restarted._at("crash", 3) and not restarted._at("hang", 5)
    assert math.isnan(restarted.loss(2, 1.0)) and restarted.loss(3, 1.0) == 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".fault-crash@3", ".fault-hang@5"]

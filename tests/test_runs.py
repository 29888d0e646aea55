"""Run folders and model references: complete checkpoints only, the newest run by training activity."""

from __future__ import annotations

import os
import time

import pytest

from gspo_cli import layout
from gspo_cli.errors import ConfigError
from gspo_cli.runs import refs


def make_run(root, name, steps, *, tracker=None, metrics_mtime=None):
    run = root / name
    for step in steps:
        ckpt = run / "checkpoints" / f"global_step_{step}"
        ckpt.mkdir(parents=True)
        for name in ("config.json", "tokenizer.json", "model.safetensors"):  # what the cheap check looks for
            (ckpt / name).write_text("{}")
    (run / "checkpoints").mkdir(parents=True, exist_ok=True)
    (run / "checkpoints" / ".global_step_99.tmp").mkdir()  # an interrupted native save
    if tracker is not None:
        (run / "checkpoints" / layout.VERL_TRACKER).write_text(f"{tracker}\n")
    metrics = run / "metrics.jsonl"
    metrics.write_text('{"step": 1, "data": {}}\n')
    if metrics_mtime is not None:
        os.utime(metrics, (metrics_mtime, metrics_mtime))
        os.utime(run / "checkpoints", (metrics_mtime, metrics_mtime))
    return run


def test_list_steps_ignores_temp_folders_and_unfinished_verl_saves(gspo_home):
    native = make_run(layout.runs_dir(), "native", [10, 20])
    assert layout.list_steps(native) == [10, 20]
    verl = make_run(layout.runs_dir(), "verl", [10, 20, 30], tracker=20)  # step 30 was killed mid-save
    assert layout.list_steps(verl) == [10, 20]
    assert refs.resolve_model("verl").step == 20
    with pytest.raises(ConfigError, match="no checkpoint at step '30'"):
        refs.resolve_model("verl:30")


def test_latest_is_the_run_that_trained_last_not_the_last_evaluated(gspo_home):
    now = time.time()
    old = make_run(layout.runs_dir(), "old", [5], metrics_mtime=now - 3600)
    make_run(layout.runs_dir(), "new", [5], metrics_mtime=now - 60)
    (old / "eval").mkdir()  # evaluating or reporting an old run touches its folder, not its training files
    os.utime(old, (now, now))
    assert layout.latest_run().name == "new"
    assert refs.resolve_model("latest").run.name == "new"


def test_model_reference_errors(gspo_home):
    with pytest.raises(ConfigError, match="no runs"):
        layout.latest_run()
    make_run(layout.runs_dir(), "empty", [])
    with pytest.raises(ConfigError, match="no complete checkpoint"):
        refs.resolve_model("empty")
    with pytest.raises(ConfigError, match="no such folder, run or hub id"):
        refs.resolve_model("nope")

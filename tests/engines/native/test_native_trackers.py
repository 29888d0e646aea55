"""The native engine's trackers (trainer.loggers tensorboard / wandb / swanlab; config/trackers.py): a real run writes
each tracker's files in offline mode, and each package's own reader gives back metrics.jsonl's names, steps and
values (tests/trackers_readback.py); keys stay out of every file and line; an online mode without its key and a
logger the engine does not write are one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import trackers_readback as readback
from engine_support_cases import assert_one_line_refusal
from native_helpers import PY, ROOT, quick_preset

ALL = "trainer.loggers=[console,file,tensorboard,wandb,swanlab]"
FOLDERS = {"tensorboard": "tensorboard", "wandb": "wandb", "swanlab": "swanlog"}
CANARY = {"WANDB_API_KEY": "wandb-canary-4b7e19d2c0", "SWANLAB_API_KEY": "swanlab-canary-93ac51f7e8"}


def _gspo(args: list[str], home, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in CANARY}
    full.update({"GSPO_HOME": str(home), "NO_COLOR": "1", **env})
    return subprocess.run([PY, "-m", "gspo_cli", *args], cwd=ROOT, env=full, capture_output=True, text=True,
                          timeout=900)


def _sets(workspace, *more: str) -> list[str]:
    return [a for s in (*workspace["sets"], *more) for a in ("--set", s)]


@pytest.mark.slow
def test_a_run_logs_to_every_tracker_and_each_reader_gives_back_metrics_jsonl(workspace):
    """`gspo train --local` with the three trackers (offline) and both keys in its environment: every tracker's
    file holds metrics.jsonl's metrics under the same names at the same steps; no key in any file or output line."""
    proc = _gspo(["train", "--preset", "tiny", "--local", "--run-name", "tracked", *_sets(workspace, ALL)],
                 workspace["home"], **CANARY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = workspace["runs"] / "tracked"
    want = readback.expected(run)
    assert {"actor/pg_loss", "critic/score/mean", "timing_s/step"} <= set(want) and len(want) > 20
    for name, read in readback.READERS.items():
        got = read(run)
        assert readback.mismatches(got, want, rel=1e-5 if name == "tensorboard" else 1e-9) == [], name
    print("\nread back:", readback.summary(run))
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(v.encode() in data for v in CANARY.values()), path
    assert not any(v in proc.stdout + proc.stderr for v in CANARY.values())


@pytest.mark.parametrize("name", sorted(readback.READERS))
def test_each_tracker_alone_writes_only_its_own_files(name, tmp_path):
    """The trainer's writer (TrackedMetrics) with one tracker: its files, read back by its package, and no other
    tracker's folder. Control: the default loggers write no tracker folder, and the readers find nothing there."""
    from gspo_cli.engines.native.trackers import TrackedMetrics

    steps = {1: {"actor/pg_loss": 0.25, "critic/score/mean": -1.5, "training/global_step": 1},
             2: {"actor/pg_loss": 0.125, "critic/score/mean": 0.5, "training/global_step": 2}}
    run = tmp_path / "one"
    with TrackedMetrics(quick_preset([f"trainer.loggers=[console,file,{name}]"]), run) as metrics:
        for step, data in steps.items():
            metrics.log(step, data)
    assert readback.mismatches(readback.READERS[name](run), readback.expected(run)) == []
    assert readback.expected(run) == {k: {s: float(d[k]) for s, d in steps.items()} for k in steps[1]}
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == [FOLDERS[name]]
    plain = tmp_path / "plain"
    with TrackedMetrics(quick_preset([]), plain) as metrics:
        metrics.log(1, steps[1])
    assert [p.name for p in plain.iterdir()] == ["metrics.jsonl"]
    with pytest.raises(AssertionError):
        readback.READERS[name](plain)


def test_the_comparison_catches_a_changed_value_a_step_and_a_name():
    """Control of `mismatches`: what the run test asserts empty is not empty when the series differ."""
    want = {"a/x": {1: 1.0, 2: 2.0}}
    assert readback.mismatches({"a/x": {1: 1.0, 2: 2.0}}, want) == []
    assert readback.mismatches({"a/x": {1: 1.0, 2: 2.5}}, want)
    assert readback.mismatches({"a/x": {1: 1.0}}, want)
    assert readback.mismatches({"a/y": {1: 1.0, 2: 2.0}}, want)


@pytest.mark.parametrize("name,var", [("wandb", "WANDB_API_KEY"), ("swanlab", "SWANLAB_API_KEY")])
def test_online_without_its_key_is_one_line_and_with_it_the_dry_run_names_no_value(workspace, name, var):
    online = [f"trainer.loggers=[console,file,{name}]", f"trainer.trackers.{name}.mode=online"]
    proc = _gspo(["train", "--preset", "tiny", "--local", "--run-name", "online", *_sets(workspace, *online)],
                 workspace["home"])
    assert_one_line_refusal(proc, f"trainer.trackers.{name}.mode is online but {var} is not set",
                            f"export {var}=", f"trainer.trackers.{name}.mode=offline")
    assert not (workspace["runs"] / "online").exists()
    dry = _gspo(["train", "--preset", "tiny", "--dry-run", "--json", *_sets(workspace, *online)], workspace["home"],
                **{var: CANARY[var]})
    assert dry.returncode == 0, dry.stdout + dry.stderr
    row = next(c for c in json.loads(dry.stdout)["preflight"]["checks"] if c["name"] == "trackers")
    assert row["status"] == "ok" and f"key: {var} from the environment, sent as a secret" in row["message"]
    assert CANARY[var] not in dry.stdout + dry.stderr


def test_a_logger_the_native_engine_does_not_write_is_refused(workspace):
    proc = _gspo(["train", "--preset", "tiny", "--dry-run", *_sets(workspace, "trainer.loggers=[console,mlflow]")],
                 workspace["home"])
    assert_one_line_refusal(proc, "trainer.loggers: mlflow is not supported by the native engine", "tensorboard")


def test_keys_travel_only_for_online_modes_and_never_from_a_preset_twice():
    from gspo_cli.config import trackers
    from gspo_cli.jobs import secret_env

    offline = quick_preset([ALL])
    assert trackers.keys(offline, CANARY) == {}  # offline: no key leaves this shell
    online = quick_preset([ALL, "trainer.trackers.wandb.mode=online"])
    assert trackers.keys(online, CANARY) == {"WANDB_API_KEY": CANARY["WANDB_API_KEY"]}
    public, secret = secret_env.split({**trackers.env(online, Path("/r")), **trackers.keys(online, CANARY)})
    assert set(secret) == {"WANDB_API_KEY"} and "WANDB_MODE" in public  # the key goes to the 0600 file
    both = quick_preset([ALL, "trainer.trackers.swanlab.mode=online", "env.vars.SWANLAB_API_KEY=from-preset"])
    assert trackers.keys(both, CANARY) == {}  # the preset's own (secret) value is the one sent


def test_a_missing_package_is_one_line_with_the_install(tmp_path):
    from gspo_cli.config import trackers
    from gspo_cli.errors import ConfigError

    preset = quick_preset([ALL])
    assert trackers.missing_modules(preset, {"tensorboard": "f", "wandb": "f", "swanlab": "f"}) == []
    missing = trackers.missing_modules(preset, {"tensorboard": "f", "wandb": "f", "swanlab": None})
    with pytest.raises(ConfigError) as info:
        trackers.raise_if_missing(preset, missing)
    assert info.value.message == "trainer.loggers has swanlab but the job's Python cannot import swanlab"
    assert "pip install swanlab" in info.value.hint


def test_env_vars_may_not_set_what_the_trackers_decide():
    from gspo_cli.errors import ConfigError

    with pytest.raises(ConfigError, match="env.vars.WANDB_MODE is set by gspo from trainer.loggers"):
        quick_preset(["env.vars.WANDB_MODE=online"])
    with pytest.raises(ConfigError, match="unknown logger 'tensorbord'"):
        quick_preset(["trainer.loggers=[console,tensorbord]"])

"""The verl route's trackers (config/trackers.py): trainer.loggers compiles to verl's `trainer.logger` and the job gets
the variables verl 0.9.1's Tracking reads (verl/utils/tracking.py): TENSORBOARD_DIR, WANDB_MODE / WANDB_DIR,
SWANLAB_MODE / SWANLAB_LOG_DIR, all inside the run folder; an online mode's key from the shell goes only to the
job's secrets, never into the compiled env, the job file or the dry-run. The real verl run that writes and reads
back the files is the engine tier's (tests/engine/test_verl_cpu.py, test_the_lr0_control_logs_to_every_tracker)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.engines.verl.compile import compile_preset

PATHS = {"train_file": "/tmp/t.parquet", "val_file": "/tmp/v.parquet"}
CANARY = "wandb-canary-0d51c7a9e3"
EXPECTED = {
    "tensorboard": lambda run: {"TENSORBOARD_DIR": str(run / "tensorboard")},
    "wandb": lambda run: {"WANDB_MODE": "offline", "WANDB_DIR": str(run)},
    "swanlab": lambda run: {"SWANLAB_MODE": "offline", "SWANLAB_LOG_DIR": str(run / "swanlog")},
}
OWNED = ("TENSORBOARD_DIR", "WANDB_MODE", "WANDB_DIR", "SWANLAB_MODE", "SWANLAB_LOG_DIR")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_tracker_compiles_to_verls_logger_and_its_variables(name, tmp_path):
    run = tmp_path / "run"
    c = compile_preset(load_preset("tiny-verl", [f"trainer.loggers=[console,file,{name}]"]), run_dir=run, **PATHS)
    assert f"trainer.logger=[console,file,{name}]" in c.overrides
    assert c.origins["trainer.logger"] == "trainer.loggers"
    assert {k: v for k, v in c.env_vars.items() if k in OWNED} == EXPECTED[name](run)
    plain = compile_preset(load_preset("tiny-verl"), run_dir=run, **PATHS)  # control: no tracker, no variable
    assert "trainer.logger=[console,file]" in plain.overrides and not set(OWNED) & set(plain.env_vars)


def test_online_mode_is_said_in_the_env_and_the_key_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", CANARY)
    preset = load_preset("tiny-verl", ["trainer.loggers=[console,file,wandb]", "trainer.trackers.wandb.mode=online"])
    c = compile_preset(preset, run_dir=tmp_path / "run", **PATHS)
    assert c.env_vars["WANDB_MODE"] == "online"
    assert CANARY not in json.dumps([c.overrides, c.env_vars, c.notes])


@pytest.mark.slow
def test_dry_run_json_carries_the_loggers_and_no_key(tmp_path, gspo):
    """The CLI's dry-run (verl's own schema check included): verl accepts the loggers; the job env holds the
    tracker variables in the run folder; the shell's key for the online mode is nowhere in the output."""
    sets = ["trainer.loggers=[console,file,tensorboard,wandb,swanlab]", "trainer.trackers.wandb.mode=online"]
    proc = gspo("train", "--preset", "tiny-verl", "--dry-run", "--json", "--run-name", "trk",
                *[a for s in sets for a in ("--set", s)],
                env={"GSPO_HOME": str(tmp_path / "home"), "WANDB_API_KEY": CANARY}, timeout=600)
    assert CANARY not in proc.stdout + proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["schema_check"]["ok"], plan["schema_error"]
    assert "trainer.logger=[console,file,tensorboard,wandb,swanlab]" in plan["overrides"]
    env, run = plan["runtime_env"]["env_vars"], Path(plan["run_dir"])
    assert env["TENSORBOARD_DIR"] == str(run / "tensorboard") and env["SWANLAB_LOG_DIR"] == str(run / "swanlog")
    assert (env["WANDB_MODE"], env["SWANLAB_MODE"]) == ("online", "offline") and "WANDB_API_KEY" not in env
    row = next(c for c in plan["preflight"]["checks"] if c["name"] == "trackers")
    assert row["status"] == "ok" and "key: WANDB_API_KEY from the environment, sent as a secret" in row["message"]


def test_the_job_gets_the_key_as_a_secret_only_in_online_mode(tmp_path, monkeypatch):
    """job_spec's env (what jobs/client.py splits: secret names to the 0600 file) has the key for online only;
    the job file (write_run) never does."""
    from gspo_cli.engines.verl import launch
    from gspo_cli.jobs import secret_env

    monkeypatch.setenv("GSPO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WANDB_API_KEY", CANARY)
    base = ["trainer.loggers=[console,file,wandb]"]
    for sets, sent in ((base, False), ([*base, "trainer.trackers.wandb.mode=online"], True)):
        plan = launch.make_plan("tiny-verl", sets, run_name="trk", schema=False, env_python=None)
        env = launch.job_spec(plan).env_vars
        assert (env.get("WANDB_API_KEY") == CANARY) is sent
        _, secret = secret_env.split(env)
        assert ("WANDB_API_KEY" in secret) is sent
        spec = launch.write_run(plan)
        assert CANARY not in spec.read_text() and CANARY not in (plan.run_dir / "config.yaml").read_text()
    assert os.environ["WANDB_API_KEY"] == CANARY

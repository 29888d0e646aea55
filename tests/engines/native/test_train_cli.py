"""`gspo train` for the native engine as a user runs it (subprocess, --local): success, JSON, clean errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from native_helpers import PY, ROOT


def _gspo(args: list[str], home) -> subprocess.CompletedProcess:
    env = {**os.environ, "GSPO_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run([PY, "-m", "gspo_cli", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_train_local_json_and_files(workspace):
    sets = sum((["--set", s] for s in workspace["sets"]), [])
    proc = _gspo(["train", "--preset", "tiny", "--local", "--json", "--run-name", "cli", *sets], workspace["home"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)  # --json: stdout is only the result
    run = workspace["runs"] / "cli"
    assert result["final_step"] == 4 and result["run_dir"] == str(run)
    assert (run / "config.yaml").is_file() and (run / "config.json").is_file()
    assert json.loads((run / "config.json").read_text())["trainer"]["total_training_steps"] == 4
    assert str(run / "metrics.jsonl") in proc.stderr  # where things are, on stderr


def test_missing_data_is_one_clean_line_with_the_fix(workspace, tmp_path):
    empty = tmp_path / "nothing-here"
    proc = _gspo(["train", "--preset", "tiny", "--local", "--set", f"paths.data_dir={empty}"], workspace["home"])
    assert proc.returncode == 2
    assert "dataset arith is not prepared for preset tiny (nothing prepared under" in proc.stderr
    assert "gspo prepare-data --preset tiny" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_set_fails_before_anything_runs(workspace):
    proc = _gspo(["train", "--preset", "tiny", "--local", "--set", "actor.lrr=1"], workspace["home"])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert not workspace["runs"].exists()


def test_run_config_carries_absolute_paths(workspace, monkeypatch):
    """The Ray job runs in another working directory: relative data/runs/model paths reach it absolute."""
    from native_helpers import QUICK_SETS, quick_preset

    from gspo_cli.engines import TrainRequest
    from gspo_cli.engines.native.launch import entry_args, prepare_run
    from gspo_cli.models.loading import resolve_model_path

    base = workspace["data"].parent
    model = Path(resolve_model_path("builtin:tiny"))
    monkeypatch.chdir(base)
    rel_model = os.path.relpath(model, base)
    preset = quick_preset(["paths.data_dir=data", "paths.runs_dir=runs", f"model.path={rel_model}", *QUICK_SETS])
    run = prepare_run(TrainRequest(preset=preset, preset_ref="tiny", run_name="rel"))
    assert run == (base / "runs" / "rel").resolve() and run.is_absolute()
    request = json.loads(Path(entry_args(run)[0]).read_text())  # the job's one argument: its request file
    assert request == {"command": "train", "config": str(run / "config.json"), "run_dir": str(run)}
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["paths"]["data_dir"] == str((base / "data").resolve())
    assert cfg["paths"]["runs_dir"] == str((base / "runs").resolve())
    assert cfg["model"]["path"] == str(model.resolve())


def test_a_run_shorter_than_its_frequencies_saves_and_validates_on_its_last_step(workspace):
    """tiny's own save_freq 50 / test_freq 25 on a 3-step run: verl's rule (engines/schedule.py) makes step 3 save
    and validate; the dry run says so. Control: without the last-step rule, 3 % 25 and 3 % 50 never fire."""
    from gspo_cli.engines import schedule

    paths = [s for s in workspace["sets"] if s.startswith("paths.")]
    sets = sum((["--set", s] for s in [*paths, "trainer.total_training_steps=3", "data.train_batch_size=4",
                                       "actor.ppo_mini_batch_size=2", "rollout.n=4"]), [])
    dry = _gspo(["train", "--preset", "tiny", "--local", "--dry-run", *sets], workspace["home"])
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "3 steps: saves and validates at step 3 only (the last step)" in " ".join(dry.stdout.split())
    proc = _gspo(["train", "--preset", "tiny", "--local", "--json", "--run-name", "short", *sets], workspace["home"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = workspace["runs"] / "short"
    assert json.loads(proc.stdout)["final_step"] == 3
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["global_step_3"]
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    val_steps = [r["step"] for r in rows if any(k.startswith("val-core/") for k in r["data"])]
    assert val_steps == [0, 3]  # val_before_train, then the last step
    # The rule fires on the last step only, not on every step: step 3 of a 4-step run does not fire.
    assert schedule.steps(3, 25) == [3] and not schedule.fires(3, 4, 25) and schedule.steps(4, -1) == []

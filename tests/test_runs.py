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


def _state(run, status, pid, **extra):
    import json
    import socket

    (run / "job_state.json").write_text(json.dumps({"status": status, "pid": pid, "host": socket.gethostname(),
                                                    "engine": "native", **extra}))


def _config(run, total=20, **algorithm):
    import yaml

    from gspo_cli.config.presets import load_preset
    from gspo_cli.config.schema import to_jsonable

    data = to_jsonable(load_preset("tiny"))
    data["trainer"]["total_training_steps"] = total
    data["algorithm"].update(algorithm)
    (run / "config.yaml").write_text(yaml.safe_dump(data))


def _metrics(run, steps):
    import json

    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": {
        "critic/score/mean": s / 100, "timing_s/step": 0.5, **({"val-core/arith/acc/mean@1": s / 40}
                                                              if s % 10 == 0 else {})}}) + "\n" for s in steps))


def test_runs_list_show_rm(gspo_home, gspo):
    """Three runs (finished, failed, running) and one whose job was killed: statuses from the job's own record."""
    import json
    import subprocess
    import sys

    from gspo_cli.runs import catalog

    root = layout.runs_dir()
    runs = {name: make_run(root, name, steps) for name, steps in
            (("done", [10, 20]), ("failed", [10]), ("live", [10]), ("killed", []))}
    for name, run in runs.items():
        _config(run, **({"loss_mode": "vanilla"} if name == "done" else {}))
        _metrics(run, range(1, 21 if name == "done" else 13))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "gspo-test-sleeper"])
    try:
        _state(runs["done"], "succeeded", 1)
        _state(runs["failed"], "failed", 1, error="DataError: prepared data missing")
        _state(runs["live"], "running", sleeper.pid)
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        _state(runs["killed"], "running", dead.pid)
        proc = gspo("runs", "list", "--json")
        assert proc.returncode == 0, proc.stderr
        rows = {r["name"]: r for r in json.loads(proc.stdout)}
        assert {n: r["status"] for n, r in rows.items()} == {"done": "finished", "failed": "failed",
                                                              "live": "running", "killed": "killed"}
        done = rows["done"]
        assert (done["steps_done"], done["total_steps"], done["last_reward"]) == (20, 20, 0.2)
        assert done["best_val"]["value"] == 0.5 and done["best_val"]["step"] == 20
        assert rows["failed"]["error"] == "DataError: prepared data missing"
        table = gspo("runs", "list", env={"COLUMNS": "80"}).stdout
        assert all(len(line) <= 80 for line in table.splitlines()) and "finished" in table and "running" in table
        info = catalog.show(runs["done"])
        assert {"key": "algorithm.loss_mode", "base": "gspo", "run": "vanilla"} in info["preset_diff"]["changes"]
        assert [(c["step"], c["complete"]) for c in info["checkpoints"]] == [(10, True), (20, True), (99, False)]
        assert info["commands"]["evaluate"] == "gspo eval arith --preset tiny --model done:all"
        assert "--set trainer.total_training_steps=40" in info["commands"]["extend"]
        shown = gspo("runs", "show", "done")
        assert shown.returncode == 0 and "algorithm.loss_mode: 'gspo' -> 'vanilla'" in shown.stdout
        assert "partial (not usable)" in shown.stdout and "gspo report done" in shown.stdout
        refused = gspo("runs", "rm", "live", "--yes")
        assert refused.returncode == 2 and "is running" in refused.stderr and runs["live"].is_dir()
        kept = gspo("runs", "rm", "failed", input="n\n")
        assert kept.returncode != 0 and runs["failed"].is_dir()
        gone = gspo("runs", "rm", "failed", "--yes")
        assert gone.returncode == 0 and not runs["failed"].exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_job_stopped_by_sigterm_is_recorded_as_stopped(tmp_path):
    """`gspo jobs stop` sends SIGTERM; the training job wrapper turns it into SystemExit(143)."""
    from gspo_cli.runs import state

    def stopped():
        raise SystemExit(143)

    with pytest.raises(SystemExit):
        state.run_tracked(tmp_path, "native", stopped)
    assert state.read(tmp_path)["status"] == "stopped"
    assert state.read(tmp_path)["error"].startswith("terminated (SIGTERM")  # not "stopped: stopped"


def test_the_wrappers_verdict_is_kept_in_the_final_record(tmp_path):
    """The job wrapper's (kind, cause) of a failure stays in job_state.json after the job writes how it ended."""
    from gspo_cli.runs import state

    def fails():
        state.note_failure(tmp_path, "config", "Error: prepared data missing: x.parquet\nmore")
        return 2

    assert state.run_tracked(tmp_path, "native", fails) == 2
    record = state.read(tmp_path)
    assert (record["status"], record["exit_code"], record["failure_kind"]) == ("failed", 2, "config")
    assert record["error"] == "Error: prepared data missing: x.parquet"
    assert state.run_tracked(tmp_path, "native", lambda: 0) == 0  # a later success clears the verdict
    assert "failure_kind" not in state.read(tmp_path) and "error" not in state.read(tmp_path)


def test_runs_show_of_a_failed_run_says_why_and_suggests_only_what_can_work(gspo_home, gspo):
    """Issue #33: a failed run showed no reason and suggested `--resume` (which hit the same error) and an eval
    of a run with no checkpoints."""
    from gspo_cli.runs import catalog

    root = layout.runs_dir()
    cfg = make_run(root, "cfg", [])  # failed before any checkpoint, of a cause that repeats
    _config(cfg)
    _metrics(cfg, range(1, 4))
    _state(cfg, "failed", 1, exit_code=2, failure_kind="config", error="Error: prepared data missing")
    info = catalog.show(cfg)
    assert set(info["commands"]) == {"check", "report"}, info["commands"]  # no resume, no eval
    assert info["commands"]["check"] == f"gspo train --preset {cfg}/config.yaml --dry-run"
    shown = gspo("runs", "show", "cfg", env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert "failed: Error: prepared data missing" in shown.stdout
    assert "config failure" in shown.stdout and "repeats it" in shown.stdout
    assert "--resume" not in shown.stdout and "gspo eval" not in shown.stdout

    lost = make_run(root, "lost", [10])  # a transient failure with a checkpoint: resume can work
    _config(lost)
    _state(lost, "failed", 1, exit_code=1, failure_kind="transient", error="NCCL timeout")
    info = catalog.show(lost)
    assert info["commands"]["resume"] == "gspo train --resume lost"
    assert info["commands"]["evaluate"] == "gspo eval arith --preset tiny --model lost:all"

    early = make_run(root, "early", [])  # transient, but nothing saved: start it again, nothing to evaluate
    _config(early)
    _state(early, "failed", 1, exit_code=1, failure_kind="transient", error="NCCL timeout")
    info = catalog.show(early)
    assert "resume" not in info["commands"] and "evaluate" not in info["commands"]
    assert info["commands"]["restart"] == f"gspo train --preset {early}/config.yaml --run-name early"

    old = make_run(root, "old", [])  # an older record: exit code, no cause
    _config(old)
    _state(old, "failed", 1, exit_code=1)
    assert "exit code 1; no cause recorded" in gspo("runs", "show", "old", env={"COLUMNS": "200"}).stdout
    _state(old, "stopped", 1, error="stopped")  # what older gspo wrote on Ctrl-C
    assert "stopped: stopped" not in gspo("runs", "show", "old", env={"COLUMNS": "200"}).stdout


def test_checkpoints_are_listed_in_step_order_in_messages(gspo_home):
    run = make_run(layout.runs_dir(), "order", [])
    for step in (100, 50, 150):
        (run / "checkpoints" / f".global_step_{step}.tmp").mkdir()
    with pytest.raises(ConfigError) as exc:
        refs.resolve_model("order")
    listed = exc.value.message[exc.value.message.index("partial saves"):]
    assert listed.index("_50.") < listed.index("_99.") < listed.index("_100.") < listed.index("_150.")
    assert refs.describe_folder(run / "checkpoints").startswith(".global_step_50.tmp/, .global_step_99.tmp/")
    assert sorted(["global_step_100", "global_step_50"], key=refs.natural_key) == ["global_step_50",
                                                                                   "global_step_100"]


def test_native_resume_continues_the_named_run(gspo_home):
    """`gspo train --resume RUN` of a native run: the run's name with its config (it said '--resume is for the
    verl engine' while runs show suggested it)."""
    from gspo_cli.config.presets import load_preset
    from gspo_cli.engines.native.launch import resumed
    from gspo_cli.engines.request import TrainRequest

    root = layout.runs_dir()
    saved = make_run(root, "saved", [50])
    _config(saved, total=100)
    preset = load_preset(str(saved / "config.yaml"))
    req = resumed(TrainRequest(preset=preset, preset_ref=str(saved / "config.yaml"), resume="saved"))
    assert (req.run_name, req.resume) == ("saved", None)
    bare = make_run(root, "bare", [])
    _config(bare, total=100)
    with pytest.raises(ConfigError, match="has no complete global_step_N") as exc:
        resumed(TrainRequest(preset=preset, preset_ref="x", resume="bare"))
    assert "--run-name bare" in exc.value.hint
    with pytest.raises(ConfigError, match="name two runs"):
        resumed(TrainRequest(preset=preset, preset_ref="x", resume="saved", run_name="other"))

"""Rough edges a new user hits in the first hour (issue #15), each through the real CLI."""

from __future__ import annotations

import json


def test_set_errors_name_the_set_not_the_preset_file(gspo):
    proc = gspo("train", "--preset", "tiny", "--set", "rollout.n=1", "--dry-run")
    assert proc.returncode == 2
    assert "Error: --set rollout.n=1: rollout.n must be >= 2" in proc.stderr and "tiny.yaml" not in proc.stderr
    assert "fix or drop that --set" in proc.stderr and "fix the preset" not in proc.stderr
    proc = gspo("train", "--preset", "tiny", "--set", "actor.ppo_mini_batch_size=64", "--dry-run")
    assert "--set actor.ppo_mini_batch_size=64: actor.ppo_mini_batch_size=64 is larger" in proc.stderr


def test_preset_has_one_rule_required_or_from_gspo_preset(gspo):
    for args in (["prepare-data"], ["env", "exports"]):
        proc = gspo(*args)
        assert proc.returncode == 2 and "Missing option '--preset'" in proc.stderr, args
    proc = gspo("env", "exports", "--format", "json", "--stack", "vllm-ascend==0.23.0",
                env={"GSPO_PRESET": "qwen3-32b"})
    assert proc.returncode == 0, proc.stderr
    assert "GSPO_PRESET" in gspo("--help", env={"COLUMNS": "100"}).stdout


def test_help_has_no_bool_placeholders_and_tables_fit_80_columns(gspo):
    env = {"COLUMNS": "80"}
    for args in (["--help"], ["eval", "--help"], ["presets", "copy", "--help"]):
        assert "<bool>" not in gspo(*args, env=env).stdout, args
    table = gspo("presets", "list", env=env).stdout
    assert "tiny" in table and "qwen3-32b-4x16" in table and "…" not in table
    assert max(len(line) for line in table.splitlines()) <= 80


def test_presets_copy_prints_the_name_that_works(gspo, gspo_home):
    proc = gspo("presets", "copy", "tiny", "my-tiny")
    assert proc.returncode == 0
    assert "gspo train --preset my-tiny --dry-run" in proc.stderr
    assert (gspo_home / "presets" / "my-tiny.yaml").is_file()


def test_rerunning_a_finished_native_run_says_so_and_how_to_extend(gspo, gspo_home):
    ckpt = gspo_home / "runs" / "done" / "checkpoints" / "global_step_40"
    ckpt.mkdir(parents=True)
    proc = gspo("train", "--preset", "tiny", "--run-name", "done", "--set", "trainer.total_training_steps=40",
                "--set", "trainer.save_freq=20")
    assert proc.returncode == 0, proc.stderr
    assert "Run done is already complete: checkpoint at step 40 of trainer.total_training_steps=40" in proc.stderr
    # issue 44: the next commands are those `gspo runs show` suggests for the run, from one source
    # (runs/catalog.commands); before, this message had its own list (extend with --preset, a new run, BENCH)
    run = gspo_home / "runs" / "done"
    import yaml

    (run / "config.yaml").write_text(yaml.safe_dump({"name": "tiny", "trainer": {
        "engine": "native", "total_training_steps": 40, "save_freq": 20}}))
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": {"critic/rewards/mean": 0.5}}) + "\n" for s in range(1, 41)))
    proc = gspo("train", "--preset", "tiny", "--run-name", "done", "--set", "trainer.total_training_steps=40",
                "--set", "trainer.save_freq=20")
    complete = proc.stderr.split("Next:\n", 1)[1].splitlines()
    shown = gspo("runs", "show", "done", env={"COLUMNS": "200"}).stdout.split("Next\n", 1)[1].splitlines()
    said = [" ".join(line.split()) for line in complete if line.strip()]
    assert said and said == [" ".join(line.split()) for line in shown if line.strip()][:len(said)]
    assert any(line.startswith("extend gspo train --resume done --set trainer.total_training_steps=80")
               for line in said), said
    assert "BENCH" not in proc.stderr
    proc = gspo("train", "--preset", "tiny", "--set", "trainer.total_training_steps=4", "--dry-run")
    # a run shorter than save_freq / test_freq is accepted: both engines save and validate on the last step (#40;
    # before, this dry-run refused it: "save_freq=50 is larger ... it would never fire")
    assert "saves and validates at step 4 only (the last step)" in " ".join((proc.stdout + proc.stderr).split())
    assert "Submitted" not in proc.stderr and not (gspo_home / "ray").exists()  # no job, no head


def test_jobs_logs_renders_events_and_raw_keeps_them(monkeypatch, capsys):
    from gspo_cli.cli import app
    from gspo_cli.jobs import client, events

    log = "".join([
        "Running entrypoint for job x\n",
        events.PREFIX + json.dumps({"kind": "message", "text": "checkpoint 1/2: step 40"}) + "\n",
        events.PREFIX + json.dumps({"kind": "progress", "step": 3, "total": 3, "task": "generate arith"}) + "\n",
        events.PREFIX + json.dumps({"kind": "result", "payload": {"accuracy": 0.5}}) + "\n",
    ])
    from gspo_cli.jobs.view_mode import ViewMode

    monkeypatch.setattr(client, "job_logs", lambda job_id, address=None: (log, ViewMode()))
    from typer.testing import CliRunner

    rendered = CliRunner().invoke(app, ["jobs", "logs", "x"])
    assert rendered.exit_code == 0
    assert "checkpoint 1/2: step 40" in rendered.output and "@@gspo" not in rendered.output
    assert "generate arith" in rendered.output
    raw = CliRunner().invoke(app, ["jobs", "logs", "x", "--raw"])
    assert raw.output == log


def test_native_dry_run_runs_its_own_preflight_and_creates_nothing(gspo, gspo_home):
    proc = gspo("train", "--preset", "tiny", "--dry-run", env={"COLUMNS": "80"})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Verdict: NOT LAUNCHABLE: 1 error(s), 0 warning(s) (native preflight")
    assert "error data: dataset arith is not prepared for preset tiny" in lines[1] and "fix: run: gspo prepare-data --preset tiny" in proc.stdout
    assert "ok    model: builtin:tiny" in proc.stdout or "ok model: builtin:tiny" in proc.stdout
    # (rich wraps the long run-folder line at 80 columns wherever the tmp path's length puts the break)
    assert "memory" in proc.stdout and "not created by a dry run" in " ".join(proc.stdout.split())
    assert max(len(line) for line in lines) <= 80
    assert not (gspo_home / "runs").exists() and not (gspo_home / "ray").exists()  # no run folder, no head
    proc = gspo("train", "--preset", "tiny", "--set", "model.path=nobody/no-such-model", "--dry-run", "--json",
                env={"HF_HUB_OFFLINE": "1"})
    checks = {c["name"]: c for c in json.loads(proc.stdout)["preflight"]["checks"]}
    assert proc.returncode == 2 and checks["model"]["status"] == "error"
    assert "not in the Hugging Face cache" in checks["model"]["message"] and checks["model"]["fix"]

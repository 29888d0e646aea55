"""`gspo train --dry-run [--json]` and `gspo train --resume RUN` for verl presets, through the real CLI."""

from __future__ import annotations

import json

import pytest
import yaml

from gspo_cli.config import presets
from gspo_cli.config.schema import to_jsonable

# Out of `make test-fast`: each test runs the `gspo` CLI in a subprocess with verl's config compose.
pytestmark = pytest.mark.slow


def test_dry_run_leads_with_the_verdict_and_its_fix_then_folded_details(gspo, gspo_home):
    proc = gspo("train", "--preset", "qwen3-32b", "--dry-run", env={"COLUMNS": "80"})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Verdict: NOT LAUNCHABLE: 1 error(s), 0 warning(s)")
    head = "\n".join(lines[:6])
    assert "error prepared data: dataset dapo-math-17k is not prepared" in head
    assert "fix: run: gspo prepare-data --preset qwen3-32b-4x16" in head
    assert max(len(line) for line in lines) <= 80 and len(lines) < 60  # folded: one line per check
    assert "--verbose" in proc.stdout and "verl schema" in proc.stdout
    assert not (gspo_home / "runs").exists()  # a dry run creates no run folder


def test_dry_run_verbose_prints_table_overrides_env_and_entrypoint_and_exits_2_without_data(gspo):
    proc = gspo("train", "--preset", "qwen3-32b", "--dry-run", "--verbose",
                env={"COLUMNS": "200", "HF_TOKEN": "hf_secret"})
    assert proc.returncode == 2, proc.stderr
    out = proc.stdout
    assert out.startswith("Verdict: NOT LAUNCHABLE")
    assert "Preflight" in out and "prepared data" in out and "gspo prepare-data --preset qwen3-32b-4x16" in out
    assert "rollout memory" in out and "verl schema" in out
    assert "actor_rollout_ref.actor.optim.lr=1e-06  [actor.lr]" in out
    assert "VERL_FILE_LOGGER_PATH=" in out and "/metrics.jsonl" in out
    assert "-m gspo_cli.job_kinds verl-train" in out and "-m verl.trainer.main_ppo" in out
    assert "Traceback" not in proc.stderr


def test_dry_run_json_parses_and_redacts_secrets(gspo, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("extends: qwen3-8b-1x16\nname: p\nenv:\n  vars:\n    WANDB_API_KEY: sekrit\n")
    proc = gspo("train", "--preset", str(f), "--dry-run", "--json")
    assert proc.returncode == 2
    plan = json.loads(proc.stdout)
    assert plan["ok"] is False and plan["schema_check"]["ok"] is True
    assert plan["runtime_env"]["env_vars"]["WANDB_API_KEY"] == "<redacted>"
    assert "sekrit" not in proc.stdout
    errors = [c for c in plan["preflight"]["checks"] if c["status"] == "error"]
    assert [c["name"] for c in errors] == ["prepared data"]
    assert plan["overrides"][0] == "algorithm.adv_estimator=grpo"


def test_resume_continues_from_the_newest_step_with_saved_config(gspo, gspo_home):
    run = gspo_home / "runs" / "qwen3-8b-1x16-20260101-000000"
    for step in (20, 40):
        (run / "checkpoints" / f"global_step_{step}").mkdir(parents=True)
    (run / "checkpoints" / ".global_step_60.tmp").mkdir()  # an interrupted save is ignored
    # verl writes its tracker after a save completes; global_step_60/ exists but its save never finished
    (run / "checkpoints" / "global_step_60" / "actor").mkdir(parents=True)
    (run / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("40")
    saved = to_jsonable(presets.load_preset("qwen3-8b-1x16", ["actor.lr=2e-6"]))
    (run / "config.yaml").write_text(yaml.safe_dump(saved))

    proc = gspo("train", "--resume", run.name, "--dry-run", "--json")
    plan = json.loads(proc.stdout)
    assert plan["run"] == run.name and plan["resume_from"].endswith("global_step_40")
    assert "trainer.resume_mode=resume_path" in plan["overrides"]
    assert f"trainer.resume_from_path={run}/checkpoints/global_step_40" in plan["overrides"]
    assert "actor_rollout_ref.actor.optim.lr=2e-06" in plan["overrides"]  # the run's saved config
    assert f"trainer.default_local_dir={run}/checkpoints" in plan["overrides"]

    proc = gspo("train", "--resume", run.name, "--set", "actor.lr=3e-6", "--dry-run", "--verbose",
                env={"COLUMNS": "200"})
    assert "--set changes: actor.lr=3e-6" in proc.stdout
    assert "actor_rollout_ref.actor.optim.lr=3e-06" in proc.stdout

    empty = gspo_home / "runs" / "fresh"  # a run gspo made (its config.yaml) that saved no checkpoint yet
    empty.mkdir()
    (empty / "config.yaml").write_text(yaml.safe_dump(saved))
    proc = gspo("train", "--resume", "fresh", "--dry-run")
    assert proc.returncode == 2 and "has no complete global_step_N checkpoint" in proc.stderr
    (gspo_home / "runs" / "bare").mkdir()  # a folder that is no run (runs/names.py): refused as such
    proc = gspo("train", "--resume", "bare", "--dry-run")
    assert proc.returncode == 2 and "is not a run" in proc.stderr
    proc = gspo("train", "--resume", "nope", "--dry-run")
    assert proc.returncode == 2 and "no run 'nope'" in proc.stderr


def test_resumed_run_keeps_its_metrics_history(tmp_path):
    """verl's file logger truncates metrics.jsonl on start; a resume keeps steps <= the checkpoint."""
    from gspo_cli.metrics.jsonl import restore_after_resume, set_aside_for_resume

    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps({"step": s, "data": {"critic/score/mean": s / 10}}) + "\n"
                               for s in range(1, 46)))  # crashed at step 45, checkpoint at 40
    aside = set_aside_for_resume(metrics, 40)
    assert not metrics.exists() and aside.is_file()
    metrics.write_text("".join(json.dumps({"step": s, "data": {}}) + "\n" for s in range(41, 43)))  # verl, resumed
    restore_after_resume(metrics, aside)
    steps = [json.loads(line)["step"] for line in metrics.read_text().splitlines()]
    assert steps == list(range(1, 43)) and not aside.exists()


def test_resume_after_a_killed_resume_keeps_the_history(tmp_path):
    """A resumed job killed (SIGKILL, `ray job stop`) before restoring leaves the history aside; the next
    resume must build on it, not overwrite it with the killed job's few lines."""
    from gspo_cli.metrics.jsonl import restore_after_resume, set_aside_for_resume

    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps({"step": s, "data": {"v": s}}) + "\n" for s in range(1, 46)))
    set_aside_for_resume(metrics, 40)
    # the resumed job wrote steps 41..62 (checkpoint at 60), then was killed: no restore happened
    metrics.write_text("".join(json.dumps({"step": s, "data": {"v": s}}) + "\n" for s in range(41, 63)))
    aside = set_aside_for_resume(metrics, 60)
    metrics.write_text("".join(json.dumps({"step": s, "data": {"v": s}}) + "\n" for s in range(61, 63)))
    restore_after_resume(metrics, aside)
    steps = [json.loads(line)["step"] for line in metrics.read_text().splitlines()]
    assert steps == list(range(1, 63)) and not aside.exists()


def test_resume_validation_line_merges_into_the_checkpoint_step(tmp_path):
    """verl resumed from global_step_4 with val_before_train logs the validation of that checkpoint as step 4:
    the history's step-4 training metrics stay, merged with it (one line per step), through a second resume too.
    (Seen in the engine tier: the old restore kept both lines and the next resume kept only the validation one.)"""
    from gspo_cli.metrics.jsonl import order_problems, read_metrics, restore_after_resume, set_aside_for_resume

    metrics = tmp_path / "metrics.jsonl"
    train = {"critic/score/mean": -0.5, "actor/grad_norm": 2.0}
    val = {"val-core/arith/acc/mean@1": 0.6}
    metrics.write_text("".join(json.dumps({"step": s, "data": dict(train)}) + "\n" for s in range(1, 6)))
    aside = set_aside_for_resume(metrics, 4)
    metrics.write_text("".join(json.dumps(r) + "\n" for r in [{"step": 4, "data": val},
                                                             *({"step": s, "data": dict(train)} for s in range(5, 10))]))
    restore_after_resume(metrics, aside)
    aside = set_aside_for_resume(metrics, 8)  # killed again after step 9, checkpoint at 8
    metrics.write_text("".join(json.dumps(r) + "\n" for r in [{"step": 8, "data": val}, {"step": 9, "data": train}]))
    restore_after_resume(metrics, aside)
    records = read_metrics(metrics)
    assert [r["step"] for r in records] == list(range(1, 10))
    assert records[3]["data"] == {**train, **val} and records[7]["data"] == {**train, **val}
    assert order_problems(metrics) == {"duplicated": [], "out_of_order": []}

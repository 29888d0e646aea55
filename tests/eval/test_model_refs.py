"""`--model` accepts what users paste (each form evaluated for real on the tiny Qwen3), and every wrong form fails
in one line in the CLI process, before any job or Ray head starts. `RUN:all` evaluates every checkpoint in one
job and skips checkpoints already evaluated with the same settings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gspo_cli.errors import ConfigError
from gspo_cli.runs import refs

ROOT = Path(__file__).resolve().parents[2]


def gspo(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "GSPO_HOME": str(home), "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, "-m", "gspo_cli", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)


def _add_step(home: Path, step: int) -> Path:
    run = home / "runs" / "tiny-test"
    dest = run / "checkpoints" / f"global_step_{step}"
    shutil.copytree(run / "checkpoints" / "global_step_5", dest)
    return dest


def test_every_accepted_form_resolves_cheaply(eval_home, tiny_model_dir):
    run = eval_home / "runs" / "tiny-test"
    _add_step(eval_home, 10)
    step5 = run / "checkpoints" / "global_step_5"
    cases = {
        "latest": (step5.parent / "global_step_10", 10),
        "tiny-test": (step5.parent / "global_step_10", 10),
        "tiny-test:5": (step5, 5),
        str(run): (step5.parent / "global_step_10", 10),  # a run folder path: its newest checkpoint
        f"{run}:5": (step5, 5),
        str(step5): (step5, 5),  # a checkpoint folder
        str(tiny_model_dir): (tiny_model_dir, None),  # an HF folder
    }
    for ref, (path, step) in cases.items():
        got = refs.resolve_model(ref)
        assert (got.path, got.step, got.kind) == (path, step, "hf"), ref
    assert [r.step for r in refs.resolve_models("tiny-test:all")] == [5, 10]
    assert [r.step for r in refs.resolve_models("tiny-test:10,5")] == [5, 10]
    hub = refs.resolve_model("Qwen/Qwen3-0.6B")
    assert (str(hub.path), hub.kind, hub.run) == ("Qwen/Qwen3-0.6B", "hub", None)
    assert refs.resolve_model("builtin:tiny").kind == "builtin"
    verl_step = eval_home / "runs" / "v" / "checkpoints" / "global_step_3"
    (verl_step / "actor").mkdir(parents=True)
    (verl_step / "actor" / "fsdp_config.json").write_text("{}")
    got = refs.resolve_model(str(verl_step))
    assert (got.kind, got.step, got.run) == ("verl", 3, eval_home / "runs" / "v")


@pytest.mark.parametrize("form", ["run-folder", "checkpoint-folder", "hf-folder"])
def test_pasted_folders_evaluate(eval_home, tiny_model_dir, form):
    """The reported bug: a run folder was taken for an HF folder and failed in transformers inside the job."""
    run = eval_home / "runs" / "tiny-test"
    model = {"run-folder": run, "checkpoint-folder": run / "checkpoints" / "global_step_5",
             "hf-folder": tiny_model_dir}[form]
    proc = gspo("eval", "arith", "--preset", "tiny", "--model", str(model), "--limit", "3", "--local", "--json",
                home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert results["metrics"]["num_problems"] == 3
    assert results["model"]["step"] == (None if form == "hf-folder" else 5)


def _bad_folders(root: Path, tiny_model_dir: Path) -> dict[str, tuple[str, str]]:
    empty = root / "empty"
    empty.mkdir()
    no_tok = root / "no-tokenizer"
    no_tok.mkdir()
    shutil.copy(tiny_model_dir / "config.json", no_tok / "config.json")
    (root / "weights.bin").write_text("x")
    return {
        "empty folder": (str(empty), "not a loadable model folder (no config.json, tokenizer files"),
        "no tokenizer": (str(no_tok), "no tokenizer files, weights"),
        "a file": (str(root / "weights.bin"), "is a file, not a folder"),
    }


def test_bad_forms_fail_in_one_line_before_any_job(eval_home, tiny_model_dir, tmp_path):
    (eval_home / "runs" / "no-ckpt").mkdir()
    (eval_home / "runs" / "no-ckpt" / "metrics.jsonl").write_text("")
    cases = {
        "unknown name": ("nope-run", "no such folder, run or hub id"),
        "missing step": ("tiny-test:7", "no checkpoint at step '7'"),
        "not a step": ("tiny-test:abc", "'abc' is not a step"),
        "no checkpoint": ("no-ckpt", "has no complete checkpoint"),
        "unknown builtin": ("builtin:huge", "unknown built-in model"),
        **_bad_folders(tmp_path, tiny_model_dir),
    }
    for label, (ref, needle) in cases.items():
        # no --local: a Ray job would be submitted (and the embedded head started) if resolution passed
        proc = gspo("eval", "arith", "--preset", "tiny", "--model", ref, home=eval_home)
        assert proc.returncode == 2, (label, proc.stderr)
        assert needle in proc.stderr and "Traceback" not in proc.stderr, (label, proc.stderr)
        assert proc.stderr.count("Error:") == 1 and "Ray" not in proc.stderr, (label, proc.stderr)
    assert not (eval_home / "ray").exists()  # no head was started
    with pytest.raises(ConfigError, match="names 2 checkpoints"):
        _add_step(eval_home, 10)
        refs.resolve_model("tiny-test:all")


def test_run_all_is_one_job_and_skips_done_steps(eval_home):
    _add_step(eval_home, 10)
    args = ["eval", "arith", "--preset", "tiny", "--model", "tiny-test:all", "--limit", "4", "--local"]
    proc = gspo(*args, "--json", home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert [r["model"]["step"] for r in results] == [5, 10]
    assert "2 checkpoints of tiny-test in one job" in proc.stderr
    assert proc.stderr.count("checkpoint 1/2") == 1 and "checkpoint 2/2" in proc.stderr
    eval_dir = eval_home / "runs" / "tiny-test" / "eval"
    folders = sorted(p.name for p in eval_dir.iterdir())  # <benchmark>-<step>-<digest of the settings>
    assert [f.rsplit("-", 1)[0] for f in folders] == ["arith-10", "arith-5"], folders
    assert len({f.rsplit("-", 1)[1] for f in folders}) == 1  # one settings digest for both steps
    step5 = eval_dir / folders[1]
    # again: nothing to do, the table comes from disk
    stamp = (step5 / "results.json").stat().st_mtime_ns
    proc = gspo(*args, home=eval_home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Already evaluated with these settings (--force redoes them): steps 5, 10" in proc.stderr
    assert "in one job" not in proc.stderr and "avg@1" in proc.stdout
    assert (step5 / "results.json").stat().st_mtime_ns == stamp
    # other settings (a different --limit) are not the same eval: both run, into folders of their own, and the
    # first results stay; --force redoes a step list
    proc = gspo(*args[:-3], "--limit", "3", "--local", home=eval_home)
    assert proc.returncode == 0 and "2 checkpoints" in proc.stderr, proc.stderr[-3000:]
    assert len(list(eval_dir.iterdir())) == 4 and (step5 / "results.json").stat().st_mtime_ns == stamp
    proc = gspo(*args[:-3], "--limit", "3", "--local", "--force", home=eval_home)
    assert proc.returncode == 0 and "2 checkpoints" in proc.stderr, proc.stderr[-3000:]

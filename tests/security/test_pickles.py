"""A checkpoint or run folder from someone else never runs code in gspo (issue #36, findings 2 and 3).

A malicious pickle (its `__reduce__` calls `os.system("touch MARK")`) is planted in every place gspo loads
checkpoints from: a native run's `trainer_state.pt` (resumed by the next `gspo train`), a verl FSDP shard
(`gspo export`, and `gspo eval --model <verl checkpoint>`, which merges it first), the files verl's own resume
unpickles (`gspo train --resume`, checked in the CLI and again by the job before verl starts), and an HF model
folder's `pytorch_model.bin` (eval's hf backend, the native trainer's model load). Each time: a one-line refusal,
no traceback, and no mark. Controls show the safe loads still load what gspo and verl write: a native run resumes,
a real sharded (DTensor) verl checkpoint merges.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gspo_cli.errors import ConfigError

pytestmark = pytest.mark.security


class Evil:
    """What an attacker plants: unpickling it runs `touch MARK`."""

    def __init__(self, mark: Path):
        self.mark = mark

    def __reduce__(self):
        return (os.system, (f"touch {self.mark}",))


def _plant(path: Path, mark: Path, payload: dict | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({**(payload or {}), "evil": Evil(mark)}, path)


def _one_line(proc, *, code: int = 2, says: str = "holds pickled objects") -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and says in errors[0], proc.stderr[-2000:]


@pytest.fixture
def mark(tmp_path) -> Path:
    path = tmp_path / "MARK-pickle-ran"
    yield path
    assert not path.exists(), "the planted pickle ran"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from gspo_cli.models.tiny import ensure_tiny_model

    return ensure_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def _arith(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gspo_cli.data.arith import make_arith_rows

    (path / "arith").mkdir(parents=True, exist_ok=True)
    for split, size in (("train", 32), ("val", 8)):
        pq.write_table(pa.Table.from_pylist(make_arith_rows(split, size, 4, ["+"], 0, "plain")),
                       path / "arith" / f"{split}.parquet")
    return path / "arith" / "val.parquet"


# ---------------------------------------------------------------- finding 2: native resume


QUICK = ["data.train_batch_size=4", "actor.ppo_mini_batch_size=2", "rollout.n=4", "trainer.save_freq=1",
         "trainer.test_freq=-1", "trainer.val_before_train=false", "actor.lr_warmup_steps=1",
         "trainer.max_restarts=0"]


@pytest.mark.slow
def test_native_resume_loads_its_own_state_and_refuses_a_planted_trainer_state(tmp_path, gspo_home, gspo_at, mark):
    data = tmp_path / "data"
    _arith(data)
    sets = [f"paths.data_dir={data}", f"paths.runs_dir={tmp_path / 'runs'}", *QUICK]

    def train(steps: int):
        args = ["train", "--preset", "tiny", "--local", "--run-name", "r"]
        for item in [*sets, f"trainer.total_training_steps={steps}"]:
            args += ["--set", item]
        return gspo_at(*args, timeout=600)

    first = train(1)
    assert first.returncode == 0, first.stderr[-3000:]
    from gspo_cli.engines.native import checkpoint

    step = tmp_path / "runs" / "r" / "checkpoints" / "global_step_1"
    real = checkpoint.load_state(step)  # control: the weights-only load reads back all the engine saves
    assert real["step"] == 1 and {"optimizer", "scheduler", "rng", "cursor"} <= set(real)
    _plant(step / checkpoint.STATE_FILE, mark, real)  # the real state plus one malicious object
    proc = train(2)
    _one_line(proc)
    assert "trainer_state.pt holds pickled objects" in proc.stderr


def test_native_load_state_refuses_a_planted_file(tmp_path, mark):
    from gspo_cli.engines.native import checkpoint

    _plant(tmp_path / checkpoint.STATE_FILE, mark)
    with pytest.raises(ConfigError, match="holds pickled objects, not just tensors"):
        checkpoint.load_state(tmp_path)


# ---------------------------------------------------------------- finding 3: verl checkpoints (export, eval)

SHARD = r"""
import os, sys, torch, torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import distribute_tensor, Shard
from safetensors.torch import load_file
model_dir, out = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo")
mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("fsdp",))
full = load_file(os.path.join(model_dir, "model.safetensors"))
torch.save({k: distribute_tensor(v, mesh, [Shard(0)]) for k, v in full.items()},
           os.path.join(out, "model_world_size_1_rank_0.pt"))
dist.destroy_process_group()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _verl_step(run: Path, model: Path, step: int = 2, *, real: bool, mark: Path | None = None) -> Path:
    """`runs/<run>/checkpoints/global_step_N/actor` as verl's FSDPCheckpointManager lays it out (one rank)."""
    actor = run / "checkpoints" / f"global_step_{step}" / "actor"
    (actor / "huggingface").mkdir(parents=True)
    for f in model.iterdir():
        if f.suffix in (".json", ".jinja") or f.name.startswith("tokenizer"):
            shutil.copy(f, actor / "huggingface" / f.name)
    (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": 1}))
    if real:
        script = run / "shard.py"
        script.write_text(SHARD)
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE="1", RANK="0")
        subprocess.run([sys.executable, str(script), str(model), str(actor)], env=env, check=True, timeout=300,
                       capture_output=True)
    else:
        _plant(actor / "model_world_size_1_rank_0.pt", mark)
    (run / "checkpoints" / "latest_checkpointed_iteration.txt").write_text(str(step))
    return actor.parent


@pytest.mark.slow
def test_export_refuses_a_planted_shard(tmp_path, gspo_home, gspo_at, tiny_model, mark):
    _verl_step(gspo_home / "runs" / "handed-over", tiny_model, real=False, mark=mark)
    proc = gspo_at("export", "handed-over", "--local", "--out", str(tmp_path / "merged"), timeout=600)
    _one_line(proc)
    assert "model_world_size_1_rank_0.pt holds pickled objects" in proc.stderr
    assert not (tmp_path / "merged").exists()


@pytest.mark.slow
def test_eval_of_a_verl_checkpoint_refuses_a_planted_shard(tmp_path, gspo_home, gspo_at, tiny_model, mark):
    step = _verl_step(tmp_path / "their-run", tiny_model, real=False, mark=mark)
    data = _arith(tmp_path / "data")
    proc = gspo_at("eval", "arith", "--preset", "tiny", "--model", str(step), "--local", "--limit", "2",
                   "--data", str(data), "--backend", "hf", timeout=600)
    _one_line(proc)
    assert not (step / "huggingface_merged").exists()


@pytest.mark.slow
def test_control_a_real_dtensor_shard_still_merges(tmp_path, gspo_home, gspo_at, tiny_model):
    from safetensors.torch import load_file

    step = _verl_step(gspo_home / "runs" / "mine", tiny_model, real=True)
    out = tmp_path / "merged"
    proc = gspo_at("export", "mine", "--local", "--out", str(out), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # one line for the merge; verl's merger output (its config dump, DeviceMesh warnings) is in merge.log (#44)
    assert f"merged verl checkpoint {step / 'actor'} into {out} (merger log: {out / 'merge.log'})" in proc.stderr
    assert "ModelMergerConfig(" not in proc.stdout + proc.stderr
    assert "ModelMergerConfig(" in (out / "merge.log").read_text()
    merged = {k: v for f in out.glob("*.safetensors") for k, v in load_file(f).items()}
    original = load_file(tiny_model / "model.safetensors")
    assert merged and all((t == original[k].to(t.dtype)).all() for k, t in merged.items())


# ---------------------------------------------------------------- verl's resume (it unpickles in full itself)


def _verl_run(gspo_home: Path, mark: Path) -> Path:
    import yaml

    from gspo_cli.config.presets import load_preset
    from gspo_cli.config.schema import to_jsonable

    run = gspo_home / "runs" / "verl-run"
    step = run / "checkpoints" / "global_step_2"
    _plant(step / "actor" / "extra_state_world_size_1_rank_0.pt", mark)
    torch.save({"w": torch.zeros(2)}, step / "actor" / "model_world_size_1_rank_0.pt")  # a harmless file first
    (run / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("2")
    (run / "config.yaml").write_text(yaml.safe_dump(to_jsonable(load_preset("qwen3-0.6b-1x1"))))
    return step


@pytest.mark.slow
def test_verl_resume_checks_the_checkpoint_before_verl_unpickles_it(gspo_home, gspo_at, mark):
    _verl_run(gspo_home, mark)
    proc = gspo_at("train", "--resume", "verl-run", "--dry-run")
    _one_line(proc)
    assert proc.stderr.startswith("Error: --resume: ") or "Error: --resume: " in proc.stderr
    assert "extra_state_world_size_1_rank_0.pt holds pickled objects" in proc.stderr


def test_the_verl_job_checks_again_before_each_attempt(gspo_home, mark):
    """The job side (engines/verl/job.py): the resume checkpoint of the first attempt and of every restart."""
    from gspo_cli.engines.verl.job import VerlAttempts

    step = _verl_run(gspo_home, mark)
    run = step.parents[1]
    attempts = VerlAttempts({"overrides": [], "resume_from": str(step)}, run)
    with pytest.raises(ConfigError, match="holds pickled objects"):
        attempts.before(0, None)
    with pytest.raises(ConfigError, match="holds pickled objects"):
        VerlAttempts({"overrides": []}, run).before(1, 2)


# ---------------------------------------------------------------- HF folders with a pickled .bin


@pytest.mark.slow
def test_an_hf_folder_with_a_planted_bin_is_refused_in_one_line(tmp_path, gspo_home, gspo_at, tiny_model, mark):
    from safetensors.torch import load_file

    hf = tmp_path / "hf"
    hf.mkdir()
    for f in tiny_model.iterdir():
        if f.suffix != ".safetensors":
            shutil.copy(f, hf / f.name)
    _plant(hf / "pytorch_model.bin", mark, load_file(tiny_model / "model.safetensors"))
    data = _arith(tmp_path / "data")
    proc = gspo_at("eval", "arith", "--preset", "tiny", "--model", str(hf), "--local", "--limit", "2",
                   "--data", str(data), "--backend", "hf", timeout=600)
    _one_line(proc, says="a weights file holds pickled objects")
    from gspo_cli.models.loading import load_model

    with pytest.raises(ConfigError, match="holds pickled objects"):  # the native trainer's model load
        load_model(str(hf))

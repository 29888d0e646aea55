"""`gspo export` merges a verl FSDP checkpoint into a Hugging Face folder with verl.model_merger, as a Ray job.

The checkpoint is real in format: two gloo ranks shard the tiny model's weights as DTensors (Shard(0) over a
2-rank device mesh) and save `model_world_size_2_rank_R.pt`, `fsdp_config.json` and `huggingface/`, the files
verl's FSDPCheckpointManager writes. The merged weights must equal the original ones.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from gspo_cli.errors import ConfigError

pytestmark = [pytest.mark.ray, pytest.mark.slow]

SHARD = r"""
import os, sys, torch, torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import distribute_tensor, Shard
from safetensors.torch import load_file
model_dir, out = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("fsdp",))
full = load_file(os.path.join(model_dir, "model.safetensors"))
sharded = {k: distribute_tensor(v, mesh, [Shard(0)]) for k, v in full.items()}
torch.save(sharded, os.path.join(out, f"model_world_size_{world}_rank_{rank}.pt"))
dist.barrier()
dist.destroy_process_group()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_checkpoint(model_dir, actor_dir, world=2):
    actor_dir.mkdir(parents=True)
    script = actor_dir.parent / "shard.py"
    script.write_text(SHARD)
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE=str(world))
    procs = [subprocess.Popen([sys.executable, str(script), str(model_dir), str(actor_dir)],
                              env=dict(env, RANK=str(r)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(world)]
    for p in procs:
        out, _ = p.communicate(timeout=180)
        assert p.returncode == 0, out
    script.unlink()
    (actor_dir / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": world}))
    hf = actor_dir / "huggingface"
    hf.mkdir()
    for f in model_dir.iterdir():
        if f.suffix in (".json", ".jinja") or f.name.startswith("tokenizer"):
            (hf / f.name).write_bytes(f.read_bytes())


def test_export_merges_a_sharded_fsdp_checkpoint(ray_head, gspo, gspo_home, tmp_path):
    from safetensors.torch import load_file

    from gspo_cli.models.tiny import ensure_tiny_model

    model = ensure_tiny_model(tmp_path / "tiny")
    run = gspo_home / "runs" / "probe-run"
    make_checkpoint(model, run / "checkpoints" / "global_step_2" / "actor")
    make_checkpoint(model, run / "checkpoints" / "global_step_4" / "actor")

    out = tmp_path / "exported"
    proc = gspo("export", "probe-run", "--step", "4", "--out", str(out), "--address", ray_head.dashboard_url, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["out"] == str(out) and result["actor"].endswith("global_step_4/actor")
    assert "config.json" in result["files"] and "succeeded" in proc.stderr
    # one line for the merge; verl's merger output stays in the merged folder's merge.log (#44)
    assert result["log"] == str(out / "merge.log") and "ModelMergerConfig(" in (out / "merge.log").read_text()
    assert f"merged verl checkpoint {result['actor']} into {out}" in proc.stderr
    assert "ModelMergerConfig(" not in proc.stderr and "DeviceMesh" not in proc.stderr

    merged = {}
    for f in out.glob("*.safetensors"):
        merged.update(load_file(f))
    original = load_file(model / "model.safetensors")
    # tied embeddings may be stored once; every saved tensor equals the original (in the dtype the merger saves)
    assert merged and set(merged) <= set(original)
    for key, tensor in merged.items():
        assert tensor.shape == original[key].shape and (tensor == original[key].to(tensor.dtype)).all(), key

    # clean errors: a step that does not exist, and a non-empty --out
    bad = gspo("export", "probe-run", "--step", "3", "--out", str(tmp_path / "x"), "--address", ray_head.dashboard_url)
    assert bad.returncode == 2 and "no checkpoint at step '3'" in bad.stderr and "available steps: 2, 4" in bad.stderr
    again = gspo("export", "probe-run", "--out", str(out), "--address", ray_head.dashboard_url)
    assert again.returncode == 2 and "exists and is not empty" in again.stderr
    nope = gspo("export", "nope", "--out", str(tmp_path / "z"), "--address", ray_head.dashboard_url)
    assert nope.returncode == 2 and "gspo export 'nope': no such run" in nope.stderr and "--model" not in nope.stderr
    # RUN:STEP with a step that is not a number is an error, not a silent export of the newest step
    typo = gspo("export", "probe-run:4x", "--out", str(tmp_path / "y"), "--address", ray_head.dashboard_url)
    assert typo.returncode == 2 and "'4x' is not a step" in typo.stderr and not (tmp_path / "y").exists()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    as_file = gspo("export", "probe-run:4", "--out", str(a_file), "--address", ray_head.dashboard_url)
    assert as_file.returncode == 2 and "is a file" in as_file.stderr and "Traceback" not in as_file.stderr


def test_export_picks_the_newest_step_verl_finished_saving(gspo_home):
    from gspo_cli.runs.refs import export_step as resolve

    ckpt = gspo_home / "runs" / "r" / "checkpoints"
    for step in (2, 4, 6):
        actor = ckpt / f"global_step_{step}" / "actor"
        actor.mkdir(parents=True)
        # verl's FSDPCheckpointManager writes this beside the shards; it is what marks verl's layout
        (actor / "fsdp_config.json").write_text('{"FSDP_version": 2, "world_size": 2}')
    (ckpt / "latest_checkpointed_iteration.txt").write_text("4")  # the save of step 6 never finished
    assert resolve("r", None) == (ckpt / "global_step_4", 4)
    assert resolve("latest", None) == (ckpt / "global_step_4", 4)
    # Even asked for explicitly, a half-saved step is not exported: merging it would fail or produce garbage.
    with pytest.raises(ConfigError, match=r"no checkpoint at step '6'") as info:
        resolve("r", 6)
    assert "available steps: 2, 4" in info.value.hint

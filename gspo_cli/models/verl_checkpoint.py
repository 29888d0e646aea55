"""Merge a verl FSDP checkpoint (`runs/<run>/checkpoints/global_step_N/actor`) into a Hugging Face folder.

verl saves one `model_world_size_W_rank_R.pt` per rank (DTensor shards) plus `fsdp_config.json` and the HF
config/tokenizer in `actor/huggingface/`. verl's model merger (`verl.model_merger merge --backend fsdp`) stitches
the shards back; this module finds the checkpoint, runs the merger (as a Ray job via `gspo export`, or in-process)
with every shard loaded weights-only (`models/verl_merge.py`: a checkpoint from someone else cannot run code),
and writes the result atomically, so a half-merged folder never looks like a model.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gspo_cli.errors import ConfigError, GspoError

JOB_COMMAND = "verl-export"
MERGED_DIR = "huggingface_merged"  # beside actor/: where `ensure_hf` caches the merge of a step


def is_verl_checkpoint(path: str | Path) -> bool:
    """A `global_step_N` folder (or its `actor/`) written by verl's FSDP checkpoint manager."""
    path = Path(path)
    return (path / "actor" / "fsdp_config.json").is_file() or (path / "fsdp_config.json").is_file()


def actor_dir(step_dir: Path) -> Path:
    step_dir = Path(step_dir)
    actor = step_dir / "actor" if (step_dir / "actor").is_dir() else step_dir
    if not (actor / "fsdp_config.json").is_file():
        raise ConfigError(f"{step_dir} is not a verl FSDP checkpoint (no actor/fsdp_config.json)",
                          "pass a run with verl checkpoints (trainer.save_freq > 0) or its global_step_N folder")
    return actor


def merge(actor: str | Path, out: str | Path) -> Path:
    """Run verl's FSDP merger with weights-only loads (`python -m gspo_cli.models.verl_merge`) into a temp
    folder, then rename onto `out`. A shard holding pickled code is refused in one line, nothing of it run."""
    from gspo_cli.fsutil import atomic_dir
    from gspo_cli.models import verl_merge

    actor, out = Path(actor), Path(out)
    with atomic_dir(out) as tmp:
        cmd = [sys.executable, "-m", verl_merge.__name__, "--local_dir", str(actor), "--target_dir", str(tmp)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode == verl_merge.REFUSED_EXIT:
            refused = [ln for ln in proc.stdout.splitlines() if ln.startswith("Error: ")][-1:] or ["Error: refused"]
            raise ConfigError(f"verl checkpoint: {refused[0][len('Error: '):]}",
                              "gspo merges verl checkpoints with torch's weights-only loader; a shard holding other "
                              "objects is not from verl's checkpoint manager (docs/security.md)")
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            last = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or ["no output"]
            raise GspoError(f"verl.model_merger failed on {actor} (exit {proc.returncode}): {last[0][:300]}",
                            "check that the checkpoint is complete (all model_world_size_*_rank_*.pt files)")
        if not (tmp / "config.json").is_file():
            raise GspoError(f"verl.model_merger wrote no config.json into {out}", "see the job log")
    return out


def ensure_hf(step_dir: str | Path) -> Path:
    """An HF folder for a verl checkpoint step: merged once into `<step>/huggingface_merged`, then reused."""
    step_dir = Path(step_dir)
    target = step_dir / MERGED_DIR
    if (target / "config.json").is_file():
        return target
    return merge(actor_dir(step_dir), target)


def job_main(argv: list[str]) -> int:
    """Job entry: `verl-export REQUEST.json` with {"actor": ACTOR_DIR, "out": OUT_DIR}."""
    from gspo_cli.jobs import events
    from gspo_cli.jobs import request as job_request

    req = job_request.read(argv, JOB_COMMAND)
    actor, out = Path(req["actor"]), Path(req["out"])
    events.message(f"merging {actor} -> {out}")
    merge(actor, out)
    files = sorted(p.name for p in out.iterdir())
    events.result({"out": str(out), "actor": str(actor), "files": files})
    return 0


def export(step_dir: Path, step_n: int | None, out: str, *, address: str | None = None, local: bool = False,
           json_out: bool = False, force: bool = False) -> int:
    """`gspo export`: merge the checkpoint of `step_dir` (runs.refs.export_step) as a Ray job (or in-process)."""
    from gspo_cli.jobs import client as jobs

    actor = actor_dir(step_dir)
    out_path = Path(out).expanduser().resolve()
    if out_path.exists() and not out_path.is_dir():
        raise ConfigError(f"--out {out_path} is a file", "pass a folder path for the merged model")
    if out_path.exists() and any(out_path.iterdir()) and not force:
        raise ConfigError(f"--out {out_path} exists and is not empty", "pick a new folder or pass --force")
    request = {"actor": str(actor.resolve()), "out": str(out_path)}
    return jobs.run_job(jobs.JobSpec(JOB_COMMAND, request, name=f"export-{step_n}"), address=address, local=local,
                        json_out=json_out)

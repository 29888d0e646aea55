"""Merge a verl FSDP checkpoint (`runs/<run>/checkpoints/global_step_N/actor`) into a Hugging Face folder.

verl saves one `model_world_size_W_rank_R.pt` per rank (DTensor shards) plus `fsdp_config.json` and the HF
config/tokenizer in `actor/huggingface/`. verl's model merger (`verl.model_merger merge --backend fsdp`) stitches
the shards back; this module finds the checkpoint, runs the merger (as a Ray job via `gspo export`, or in-process)
with every shard loaded weights-only (`models/verl_merge.py`: a checkpoint from someone else cannot run code),
and writes the result atomically, so a half-merged folder never looks like a model. The merger's own output
(verl's config dump, torch's DeviceMesh warnings, transformers' deprecations, progress bars) is none of the user's
business unless it fails: it is kept in `merge.log` inside the merged folder (beside it on failure, named in the
error), and the user sees one line (`merged_line`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from gspo_cli.errors import ConfigError, GspoError

JOB_COMMAND = "verl-export"
MERGED_DIR = "huggingface_merged"  # beside actor/: where `ensure_hf` caches the merge of a step
LOG_NAME = "merge.log"  # the merger's own output, inside the merged folder (beside it, named *.merge.log, on failure)
SAFE_LOAD_HINT = ("gspo merges verl checkpoints with torch's weights-only loader; a shard holding other objects is "
                  "not from verl's checkpoint manager (docs/security.md)")
_PROGRESS = re.compile(r"\d+%\||it/s\]|s/it\]")  # tqdm bars
_TORCH_LOG = re.compile(r"[WI]\d{4} \d\d:\d\d:\d\d")  # torch's glog-style warnings (the DeviceMesh one)


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


def failed_log(out: str | Path) -> Path:
    """Where the merger's log of a failed merge into `out` is kept (beside it: the temp folder is removed)."""
    out = Path(out)
    return out.with_name(f"{out.name}.{LOG_NAME}")


def merged_line(actor: str | Path, out: str | Path) -> str:
    """The one line a user sees for a merge: what went where, and where verl's own output is."""
    return f"merged verl checkpoint {actor} into {out} (merger log: {Path(out) / LOG_NAME})"


def last_meaningful(log_text: str) -> str:
    """The line of the merger's log that says why it stopped: not blank, not a progress bar, not a torch warning."""
    lines = [ln.strip() for ln in log_text.splitlines()]
    useful = [ln for ln in lines if ln and not _PROGRESS.search(ln) and not _TORCH_LOG.match(ln)]
    return useful[-1][:300] if useful else "no output"


def merge(actor: str | Path, out: str | Path) -> Path:
    """Run verl's FSDP merger with weights-only loads (`python -m gspo_cli.models.verl_merge`) into a temp
    folder, then rename onto `out`. Its output (config dump, torch's DeviceMesh warnings, progress bars) goes to
    `out/merge.log`, renamed with the rest; on failure the log is kept beside `out` and the error names it.
    A shard holding pickled code is refused in one line, nothing of it run."""
    from gspo_cli.fsutil import atomic_dir
    from gspo_cli.models import verl_merge

    actor, out = Path(actor), Path(out)
    with atomic_dir(out) as tmp:
        log = tmp / LOG_NAME
        cmd = [sys.executable, "-m", verl_merge.__name__, "--local_dir", str(actor), "--target_dir", str(tmp)]
        with open(log, "w", encoding="utf-8") as sink:  # unbuffered: the log keeps prints and warnings in order
            proc = subprocess.run(cmd, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  env=dict(os.environ, PYTHONUNBUFFERED="1"))
        if proc.returncode != 0 or not (tmp / "config.json").is_file():
            kept = failed_log(out)
            os.replace(log, kept)  # out of the temp folder atomic_dir removes
            _raise_failed(actor, out, kept, proc.returncode)
    failed_log(out).unlink(missing_ok=True)  # the log of an earlier failed try is stale now
    return out


def _raise_failed(actor: Path, out: Path, log: Path, code: int) -> None:
    from gspo_cli.models.verl_merge import REFUSED_EXIT

    text = log.read_text(encoding="utf-8", errors="replace")
    where = f"(merger log: {log})"
    if code == REFUSED_EXIT:  # safe_load refused a shard: its own Error/Hint lines say why
        said = {word: [ln[len(word):] for ln in text.splitlines() if ln.startswith(word)][-1:]
                for word in ("Error: ", "Hint: ")}
        raise ConfigError(f"verl checkpoint: {(said['Error: '] or ['refused'])[0]} {where}",
                          (said["Hint: "] or [SAFE_LOAD_HINT])[0])
    if code == 0:
        raise GspoError(f"verl.model_merger wrote no config.json into {out} {where}", f"read {log}")
    raise GspoError(f"verl.model_merger failed on {actor} (exit {code}): {last_meaningful(text)} {where}",
                    "check that the checkpoint is complete (all model_world_size_*_rank_*.pt files)")


def ensure_hf(step_dir: str | Path, say: Callable[[str], None] | None = None) -> Path:
    """An HF folder for a verl checkpoint step: merged once into `<step>/huggingface_merged`, then reused.
    `say` gets one line: the merge just made, or the earlier one reused."""
    step_dir = Path(step_dir)
    target = step_dir / MERGED_DIR
    if (target / "config.json").is_file():
        if say:
            say(f"{step_dir} is a verl checkpoint: using {target}, merged before")
        return target
    merge(actor_dir(step_dir), target)
    if say:
        say(merged_line(step_dir, target))
    return target


def job_main(argv: list[str]) -> int:
    """Job entry: `verl-export REQUEST.json` with {"actor": ACTOR_DIR, "out": OUT_DIR}."""
    from gspo_cli.jobs import events
    from gspo_cli.jobs import request as job_request

    req = job_request.read(argv, JOB_COMMAND)
    actor, out = Path(req["actor"]), Path(req["out"])
    merge(actor, out)
    events.message(merged_line(actor, out))
    files = sorted(p.name for p in out.iterdir())
    events.result({"out": str(out), "actor": str(actor), "files": files, "log": str(out / LOG_NAME)})
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

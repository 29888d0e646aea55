"""Native checkpoints: `checkpoints/global_step_<N>/` = an HF folder (model + tokenizer) + `trainer_state.pt`.

A checkpoint is written into a hidden temp folder (`.global_step_<N>.*.tmp`, fsutil.atomic_dir) and renamed into place, so a
folder named `global_step_<N>` is always complete; old ones are renamed to a hidden name before deletion, so a
kill during retention never leaves a half-deleted folder that looks complete. Hidden leftovers are removed at
start. `trainer_state.pt` holds the optimizer, the LR scheduler, all RNG states, the data cursor and the step;
it is read back with torch's weights-only loader (`models/safe_load.py`), never unpickled in full.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from gspo_cli.fsutil import atomic_dir
from gspo_cli.layout import checkpoints_dir, list_steps
from gspo_cli.models.hf_save import save_hf_folder

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

STATE_FILE = "trainer_state.pt"


def step_dir(run_dir: Path, step: int) -> Path:
    return checkpoints_dir(run_dir) / f"global_step_{step}"


def clean_partial(run_dir: Path) -> None:
    root = checkpoints_dir(run_dir)
    if root.is_dir():
        for p in root.iterdir():
            if p.name.startswith(".") and p.is_dir():
                shutil.rmtree(p, ignore_errors=True)


def rng_state() -> dict:
    state = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save(run_dir: Path, step: int, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
         optimizer: torch.optim.Optimizer, scheduler: torch.optim.lr_scheduler.LRScheduler, cursor: dict,
         keep: int | None) -> Path:
    dest = step_dir(run_dir, step)
    # A hidden temp folder beside dest, renamed into place when complete (a re-save of a step swaps via a hidden
    # name); folder permissions follow the umask, as save_pretrained's files do.
    with atomic_dir(dest) as tmp:
        save_hf_folder(model, tokenizer, tmp)
        torch.save(
            {"step": step, "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
             "rng": rng_state(), "cursor": cursor},
            tmp / STATE_FILE,
        )
    if keep:
        prune(run_dir, keep)
    return dest


def prune(run_dir: Path, keep: int) -> list[int]:
    """Delete all but the newest `keep` checkpoints; returns the steps deleted."""
    root = checkpoints_dir(run_dir)
    victims = list_steps(run_dir)[:-keep]
    for step in victims:
        victim = step_dir(run_dir, step)
        hidden = root / f".{victim.name}.deleting"
        os.replace(victim, hidden)
        shutil.rmtree(hidden, ignore_errors=True)
    return victims


def latest(run_dir: Path) -> Path | None:
    steps = list_steps(run_dir)
    return step_dir(run_dir, steps[-1]) if steps else None


def load_state(path: Path) -> dict:
    """`trainer_state.pt` with torch's weights-only loader: a run folder may come from someone else, and what
    `save` writes (tensors, numbers, the python RNG tuple) needs nothing more. A file holding anything else is a
    one-line ConfigError; nothing of it runs."""
    from gspo_cli.models.safe_load import load

    return load(path / STATE_FILE, map_location="cpu")


def load_weights(model: torch.nn.Module, path: Path, device: torch.device | str) -> tuple[list[str], list[str]]:
    """Load a checkpoint's safetensors (one file or an index of shards) into `model`: (missing, unexpected)."""
    import json

    from safetensors.torch import load_file

    index = path / "model.safetensors.index.json"
    files = sorted(set(json.loads(index.read_text())["weight_map"].values())) if index.is_file() else [
        "model.safetensors"]
    state: dict = {}
    for name in files:
        state.update(load_file(str(path / name), device=str(device)))
    return model.load_state_dict(state, strict=False)

"""Where a native run starts: the newest complete checkpoint (trainer.resume_mode), or a refusal to train from
scratch into a folder that already holds a run; then that checkpoint's state back into the model, optimizer and
LR scheduler."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from gspo_cli.engines.native import checkpoint
from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from gspo_cli.engines.native.trackers import TrackedMetrics


def checkpoint_to_resume(run_dir: Path, resume_mode: str, metrics: TrackedMetrics) -> Path | None:
    """The checkpoint to continue from, or None to train from step 0 (the metrics of steps that never reached a
    checkpoint dropped). Hidden leftovers of an interrupted save are removed first."""
    checkpoint.clean_partial(run_dir)
    mode = resume_mode
    if mode == "disable" and int(os.environ.get("GSPO_ATTEMPT") or 0) > 0:
        mode = "auto"  # a restart by the job wrapper continues this job's own run
    latest = checkpoint.latest(run_dir)
    has_metrics = metrics.path.exists() and metrics.path.stat().st_size > 0
    if mode == "disable":
        # Training from scratch into a used folder would mix two runs' metrics, and retention would delete
        # the new checkpoints in favour of the old run's higher steps.
        if has_metrics or latest is not None:
            raise ConfigError(f"run {run_dir.name} already has metrics or checkpoints and resume_mode is "
                              "disable", "pick another --run-name, or delete the run folder")
        return None
    if latest is None and has_metrics:
        # Metrics of steps that never reached a checkpoint (and a step-0 validation): all redone.
        metrics.truncate_after(-1)
    return latest


def restore(latest: Path, model, optimizer: torch.optim.Optimizer, scheduler: torch.optim.lr_scheduler.LRScheduler,
            device: torch.device) -> dict[str, Any]:
    """Load `latest` into the model, optimizer, scheduler and RNGs; its trainer state (step, cursor) for the rest."""
    state = checkpoint.load_state(latest)
    missing, unexpected = checkpoint.load_weights(model, latest, device)
    # Tied embeddings are saved once; anything else missing means a foreign or broken checkpoint.
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise ConfigError(f"checkpoint {latest} does not match the model (missing {missing[:3]}, "
                          f"unexpected {unexpected[:3]})", "resume_mode=disable or a new --run-name")
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    checkpoint.set_rng_state(state["rng"])
    return state

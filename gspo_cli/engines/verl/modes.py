"""verl 0.9.x's V1 trainer modes (`trainer.v1.trainer_mode`): how a preset's `trainer.mode` splits the cluster, and
the preflight rules verl asserts at start-up (verl/trainer/ppo/v1/trainer_separate_async.py) plus the staleness
risk under GSPO's clip. Pure: no I/O."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.checks import Check

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


def rollout_pool(p: Preset) -> tuple[int, int]:
    """separate_async: (nodes, devices per node) that only generate: whole nodes when the cluster has several."""
    c, share = p.cluster, p.trainer.rollout_share
    if c.nnodes > 1:
        return max(1, round(c.nnodes * share)), c.devices_per_node
    return 1, max(1, round(c.devices_per_node * share))


def checks(preset: Preset) -> list[Check]:
    """verl's V1 async trainer modes: what verl asserts at start-up, and the staleness risk under GSPO's clip."""
    tr, a, d = preset.trainer, preset.actor, preset.data
    if tr.mode == "sync":
        return []
    keys = ["trainer.mode", "trainer.parameter_sync_step", "trainer.rollout_share"]
    out: list[Check] = []
    if tr.mode == "separate_async":
        want = tr.parameter_sync_step * a.ppo_mini_batch_size
        if d.train_batch_size != want:  # verl/trainer/ppo/v1/trainer_separate_async.py:59
            out.append(Check("async mode", "error", f"separate_async needs data.train_batch_size == "
                                f"parameter_sync_step x ppo_mini_batch_size, got {d.train_batch_size} != "
                                f"{tr.parameter_sync_step} x {a.ppo_mini_batch_size}", keys + ["data.train_batch_size"],
                                f"set trainer.parameter_sync_step={max(1, d.train_batch_size // a.ppo_mini_batch_size)}"
                                " (or change actor.ppo_mini_batch_size)"))
        out += _pool_checks(preset, keys)
    stale = f"up to {tr.parameter_sync_step} updates" if tr.mode == "separate_async" else "one update"
    if preset.algorithm.loss_mode.startswith("gspo"):
        out.append(Check("async staleness", "warn", f"trainer.mode {tr.mode}: responses resumed across weight "
                            f"syncs mix policies {stale} old; GSPO's clip ({preset.algorithm.clip_ratio_low:g}/"
                            f"{preset.algorithm.clip_ratio_high:g}) is ~1000x tighter than PPO's, so stale sequences "
                            "are clipped more (watch actor/pg_clipfrac; upstream runs sync)", keys,
                            "use trainer.mode: sync for the upstream recipe, or lower parameter_sync_step"))
    return out


def _pool_checks(preset: Preset, keys: list[str]) -> list[Check]:
    """separate_async splits the cluster: both pools non-empty, the rollout pool a whole number of TP groups."""
    c, tp = preset.cluster, preset.rollout.tensor_parallel_size
    nodes, per_node = rollout_pool(preset)
    train_devices = c.world_size - nodes * per_node
    where = f"{nodes} node(s) x {per_node} generate, {train_devices} device(s) train"
    if train_devices < 1:
        return [Check("async pools", "error", f"separate_async leaves no device to train ({where})", keys,
                      "lower trainer.rollout_share or add devices")]
    if per_node % tp:
        return [Check("async pools", "error", f"the rollout pool ({where}) is not a whole number of TP {tp} groups",
                      keys + ["rollout.tensor_parallel_size"], "change trainer.rollout_share or the rollout TP")]
    return [Check("async pools", "ok", where, keys)]

"""Batch metrics of one native training step, in verl's names and definitions (pure: tensors in, floats out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from gspo_cli.engines.native.rollout import RolloutBatch


def _stats(prefix: str, values: torch.Tensor) -> dict[str, float]:
    v = values.detach().float().cpu()
    return {f"{prefix}/mean": v.mean().item(), f"{prefix}/max": v.max().item(), f"{prefix}/min": v.min().item()}


def data_metrics(batch: RolloutBatch, scores: torch.Tensor, token_adv: torch.Tensor, max_response_length: int
                 ) -> dict[str, float]:
    """verl's `compute_data_metrics` for this batch (same names, same definitions; checked against verl in tests).

    Advantages are summarised over valid response tokens (not per sequence), and a response counts as clipped
    when its length equals the response limit, EOS or not, as verl counts them.
    """
    resp_len = batch.response_mask.sum(-1).float()
    prompt_len = batch.attention_mask[:, :batch.prompt_len].sum(-1).float()
    out = {**_stats("critic/score", scores), **_stats("critic/rewards", scores)}  # no KL in reward: rewards == scores
    out.update(_stats("critic/advantages", torch.masked_select(token_adv, batch.response_mask.bool())))
    out.update(_stats("response_length", resp_len))
    out["response_length/clip_ratio"] = resp_len.eq(max_response_length).float().mean().item()
    out.update(_stats("prompt_length", prompt_len))
    return out


def rollout_probs_diff(rollout_log_probs: torch.Tensor, old_log_probs: torch.Tensor, response_mask: torch.Tensor
                       ) -> dict[str, float]:
    """verl's `calculate_debug_metrics`: |p_rollout - p_old| per response token (probabilities, not logs). Here the
    sampler and the trainer are the same model, so this is numerical noise (~1e-6); a large value means the two
    disagree (another temperature, precision or kernel), which silently turns the run off-policy."""
    valid = response_mask.bool()
    if not valid.any():
        return {}
    diff = torch.masked_select((old_log_probs.exp() - rollout_log_probs.exp()).abs(), valid).float()
    return {"training/rollout_probs_diff_mean": diff.mean().item(), "training/rollout_probs_diff_max": diff.max().item(),
            "training/rollout_probs_diff_std": diff.std().item() if diff.numel() > 1 else 0.0}

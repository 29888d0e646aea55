"""GRPO outcome advantages: one scalar score per response, normalised within its prompt's group.

Semantics are verl 0.9.1's `compute_grpo_outcome_advantage` (verl/trainer/ppo/core_algos.py):

- responses are grouped by prompt id (verl's `index`, the `uid` of each prompt);
- a group of two or more gets A = (r - mean) / (std + epsilon) with the *unbiased* std (torch.std default),
  or A = r - mean with `norm_by_std=False` (Dr. GRPO);
- a group of ONE gets mean 0 and std 1, i.e. A = r / (1 + epsilon) (verl does not zero it);
- a group whose scores are all equal has std 0 and gets A = 0.

verl takes token-level rewards [B, T] and sums them over T to get the score; here the caller passes the
per-sequence score [B] directly, and `broadcast_to_tokens` does verl's final `scores.unsqueeze(-1) * mask`.
verl's `config` (AlgoConfig) argument is not read by verl's function and is not modelled.

Unlike verl's Python loop over the batch, this is vectorised (one scatter per statistic), so it runs on the
scores' device without a host round trip per sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["broadcast_to_tokens", "group_index", "grpo_outcome_advantages"]


def group_index(group_ids: Sequence | torch.Tensor, device: torch.device | None = None) -> torch.Tensor:
    """Map arbitrary group ids (strings, ints, a numpy array, a tensor) to dense int64 ids 0..G-1."""
    if isinstance(group_ids, torch.Tensor):
        _, inverse = torch.unique(group_ids, return_inverse=True)
        return inverse.to(device=device if device is not None else group_ids.device, dtype=torch.long)
    dense: dict = {}
    # Order of first appearance. 0-d tensors hash by identity, so they are unwrapped to python scalars first.
    ids = [dense.setdefault(g.item() if isinstance(g, torch.Tensor) else g, len(dense)) for g in group_ids]
    return torch.tensor(ids, dtype=torch.long, device=device)


def grpo_outcome_advantages(
    scores: torch.Tensor,
    group_ids: Sequence | torch.Tensor,
    *,
    norm_by_std: bool = True,
    epsilon: float = 1e-6,
) -> torch.Tensor:
    """Per-sequence GRPO advantages [B] from per-sequence scores [B] and their prompt group ids.

    Computed without gradient, as verl does (advantages are data, not a function of the policy).
    """
    if scores.dim() != 1:
        raise ValueError(f"scores must be 1-D [B], got shape {tuple(scores.shape)}")
    if len(group_ids) != scores.shape[0]:
        raise ValueError(f"{len(group_ids)} group ids for {scores.shape[0]} scores")
    with torch.no_grad():
        x = scores.detach()
        if not torch.is_floating_point(x):
            x = x.to(torch.get_default_dtype())
        if x.numel() == 0:
            return x.clone()
        idx = group_index(group_ids, device=x.device)
        n_groups = int(idx.max().item()) + 1
        count = torch.zeros(n_groups, dtype=x.dtype, device=x.device).index_add_(0, idx, torch.ones_like(x))
        total = torch.zeros(n_groups, dtype=x.dtype, device=x.device).index_add_(0, idx, x)
        mean = total / count
        centred = x - mean[idx]
        sq = torch.zeros(n_groups, dtype=x.dtype, device=x.device).index_add_(0, idx, centred * centred)
        # Unbiased variance; groups of one are overridden below, so guard their 0/0 here.
        std = torch.sqrt(sq / (count - 1).clamp(min=1))
        single = count == 1
        mean = torch.where(single, torch.zeros_like(mean), mean)
        std = torch.where(single, torch.ones_like(std), std)
        adv = x - mean[idx]
        if norm_by_std:
            adv = adv / (std[idx] + epsilon)
        return adv


def broadcast_to_tokens(adv: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
    """[B] advantages -> [B, T] token advantages, zero outside the response (verl: `adv[:, None] * mask`)."""
    if adv.dim() != 1 or response_mask.dim() != 2 or adv.shape[0] != response_mask.shape[0]:
        raise ValueError(f"need adv [B] and mask [B, T], got {tuple(adv.shape)} and {tuple(response_mask.shape)}")
    return adv.unsqueeze(-1) * response_mask.to(adv.dtype)

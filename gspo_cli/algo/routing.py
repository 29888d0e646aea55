"""Mixture-of-Experts routing comparisons, pure torch, no I/O: how many routing decisions changed between two
policies, how evenly the experts are loaded, and how much of a log-prob gap the router accounts for.

Tensors:
- ``indices``: int [B, T, L, k], the k experts each token position was routed to in each of the L MoE layers
  (the order inside the k does not matter: a routing decision is the *set* of experts);
- ``mask``: [B, T], 1 where the position counts.

Definitions (docs/health.md "MoE routing metrics" names the logged metrics after these):
- **expert flip fraction** (`FlipCounts.flip_frac`): over every counted (position, layer), the share of the k
  selected experts that are not selected by the other policy: sum (k - |S_a & S_b|) / (k x pairs). This is the
  GSPO paper's routing-volatility figure (Zheng et al. 2025, arXiv:2507.18071, sec. 5.3: "about 10% of the
  experts activated under the new policy differ from those activated under the old policy" for Qwen3-30B-A3B).
  A policy that routed at random would flip 1 - k/E of them (`random_flip_frac`).
- **changed fraction** (`FlipCounts.changed_frac`): the share of (position, layer) pairs whose expert set changed
  at all; **token changed fraction** (`FlipCounts.token_changed_frac`): the share of counted positions whose expert
  set changed in at least one layer (Megatron-LM#4168 reports 94% of tokens for rollout vs training engine on
  Qwen3-30B-A3B, where ~10% of the per-layer decisions differ: over 48 layers small per-layer rates compound).
- **load** (`expert_load`): tokens routed to each expert per layer, [L, E]; each token counts once per expert
  of its top-k. `load_balance` summarises it per layer as the coefficient of variation (std / mean of the
  per-expert counts, population std; 0 = perfectly even) and verl's violation figures
  (verl/trainer/ppo/metric_utils.py `_compute_rollout_moe_load_balance_metrics_from_counts`: the load share
  times E, minus 1, i.e. max_vio = max/mean - 1, min_vio = min/mean - 1, avg_vio = mean |share x E - 1|).
- **router's share of the log-prob gap** (`GapSums.router_share`): with the policy being trained evaluated twice
  on the same tokens, once routing freely and once with every routing decision forced to the old policy's
  (routing replay: the old expert sets, gate weights from the current router), the gap to the old log-probs is
  gap = mean_t |logp - logp_old| (token level) or mean_i |log s_i| (sequence level, s_i GSPO's sequence ratio);
  router share = 1 - gap_replay / gap_free. 0: the router moved no log-prob (replaying the old routes changes
  nothing); 1: all of the gap came from changed routes; it can leave [0, 1] when replay moves a log-prob
  further than free routing does.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = [
    "FlipCounts",
    "GapSums",
    "expert_load",
    "load_balance",
    "overlap",
    "random_flip_frac",
    "routing_flips",
    "shift_to_scoring_positions",
    "verl_load_mask",
]


def _check(indices: torch.Tensor, mask: torch.Tensor) -> None:
    if indices.dim() != 4:
        raise ValueError(f"routing indices must be [B, T, L, k], got {tuple(indices.shape)}")
    if tuple(mask.shape) != tuple(indices.shape[:2]):
        raise ValueError(f"mask {tuple(mask.shape)} does not match indices {tuple(indices.shape)}")


def overlap(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|S_a & S_b| per (position, layer): [B, T, L] from two [B, T, L, k] index tensors (k distinct experts each)."""
    if a.shape != b.shape:
        raise ValueError(f"routing indices differ in shape: {tuple(a.shape)} vs {tuple(b.shape)}")
    return (a.unsqueeze(-1) == b.unsqueeze(-2)).any(-1).sum(-1)


@dataclass(frozen=True)
class FlipCounts:
    """Sums that add up over micro- and mini-batches; the fractions are taken at the end."""

    flipped: float = 0.0  # selected experts not selected by the other policy, summed
    changed: float = 0.0  # (position, layer) pairs whose expert set changed
    pairs: float = 0.0  # counted (position, layer) pairs
    k: int = 1
    tokens_changed: float = 0.0  # positions whose expert set changed in at least one layer
    tokens: float = 0.0  # counted positions

    def __add__(self, other: FlipCounts) -> FlipCounts:
        if self.pairs and other.pairs and self.k != other.k:
            raise ValueError(f"cannot add flip counts of top-{self.k} and top-{other.k} routing")
        return FlipCounts(self.flipped + other.flipped, self.changed + other.changed, self.pairs + other.pairs,
                          other.k if not self.pairs else self.k, self.tokens_changed + other.tokens_changed,
                          self.tokens + other.tokens)

    @property
    def flip_frac(self) -> float | None:
        return self.flipped / (self.k * self.pairs) if self.pairs else None

    @property
    def changed_frac(self) -> float | None:
        return self.changed / self.pairs if self.pairs else None

    @property
    def token_changed_frac(self) -> float | None:
        return self.tokens_changed / self.tokens if self.tokens else None


def routing_flips(a: torch.Tensor, b: torch.Tensor, mask: torch.Tensor) -> FlipCounts:
    """Flip counts between two routings of the same positions (see the module doc)."""
    _check(a, mask)
    common = overlap(a, b)  # [B, T, L]
    positions = mask.bool()
    valid = positions.unsqueeze(-1).expand_as(common)
    k = a.shape[-1]
    flipped = (k - common)[valid]
    token_changed = (common < k).any(-1)[positions]
    return FlipCounts(float(flipped.sum()), float((flipped > 0).sum()), float(flipped.numel()), k,
                      float(token_changed.sum()), float(token_changed.numel()))


def random_flip_frac(num_experts: int, k: int) -> float:
    """Expected expert flip fraction between two independent uniform top-k choices: 1 - k/E."""
    return 1.0 - k / num_experts


def expert_load(indices: torch.Tensor, mask: torch.Tensor, num_experts: int) -> torch.Tensor:
    """Tokens routed to each expert per layer, int64 [L, E], counting only masked-in positions."""
    _check(indices, mask)
    L = indices.shape[2]
    chosen = indices[mask.bool()]  # [N, L, k]
    if chosen.numel() and (int(chosen.min()) < 0 or int(chosen.max()) >= num_experts):
        raise ValueError(f"expert index outside 0..{num_experts - 1}")
    offsets = torch.arange(L, device=indices.device).view(1, L, 1) * num_experts
    flat = (chosen.long() + offsets).reshape(-1)
    return torch.bincount(flat, minlength=L * num_experts).view(L, num_experts)


def load_balance(counts: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per-layer summaries of an [L, E] load: `cv` (std / mean of the counts, population std), and verl's
    `max_vio`, `min_vio`, `avg_vio` (share x E - 1: max, min, mean of its absolute value). Layers without any
    token give 0."""
    load = counts.double()
    total = load.sum(dim=1, keepdim=True)
    mean = total / load.shape[1]
    cv = torch.where(mean.squeeze(1) > 0, load.std(dim=1, unbiased=False) / mean.squeeze(1).clamp(min=1e-12),
                     torch.zeros_like(mean.squeeze(1)))
    deviation = load / total.clamp(min=1.0) * load.shape[1] - 1.0
    deviation = torch.where(total > 0, deviation, torch.zeros_like(deviation))
    return {"cv": cv, "max_vio": deviation.max(dim=1).values, "min_vio": deviation.min(dim=1).values,
            "avg_vio": deviation.abs().mean(dim=1)}


@dataclass(frozen=True)
class GapSums:
    """Sums of the log-prob gap to the old policy, free routing vs routing replayed from the old policy."""

    token_free: float = 0.0  # sum over tokens of |logp - logp_old|
    token_replay: float = 0.0
    tokens: float = 0.0
    seq_free: float = 0.0  # sum over sequences of |log s_i|
    seq_replay: float = 0.0
    seqs: float = 0.0

    def __add__(self, o: GapSums) -> GapSums:
        return GapSums(self.token_free + o.token_free, self.token_replay + o.token_replay, self.tokens + o.tokens,
                       self.seq_free + o.seq_free, self.seq_replay + o.seq_replay, self.seqs + o.seqs)

    @classmethod
    def of(cls, logp_free: torch.Tensor, logp_replay: torch.Tensor, logp_old: torch.Tensor, mask: torch.Tensor
           ) -> GapSums:
        """From [B, R] log-probs of the response tokens and the response mask."""
        m = mask.to(torch.float64)
        free = (logp_free.double() - logp_old.double()) * m
        replay = (logp_replay.double() - logp_old.double()) * m
        lengths = m.sum(-1)
        nonempty = lengths > 0
        seq = lengths.clamp(min=1)
        return cls(float(free.abs().sum()), float(replay.abs().sum()), float(m.sum()),
                   float((free.sum(-1) / seq).abs()[nonempty].sum()), float((replay.sum(-1) / seq).abs()[nonempty].sum()),
                   float(nonempty.sum()))

    @staticmethod
    def _share(free: float, replay: float) -> float | None:
        return 1.0 - replay / free if free > 0 else None

    @property
    def token_gap(self) -> float | None:
        return self.token_free / self.tokens if self.tokens else None

    @property
    def token_gap_replay(self) -> float | None:
        return self.token_replay / self.tokens if self.tokens else None

    @property
    def seq_gap(self) -> float | None:
        return self.seq_free / self.seqs if self.seqs else None

    @property
    def seq_gap_replay(self) -> float | None:
        return self.seq_replay / self.seqs if self.seqs else None

    @property
    def router_share(self) -> float | None:
        return self._share(self.token_free, self.token_replay)

    @property
    def router_seq_share(self) -> float | None:
        return self._share(self.seq_free, self.seq_replay)


def shift_to_scoring_positions(indices: torch.Tensor, prompt_len: int, response_len: int) -> torch.Tensor:
    """From routing over a whole prompt+response sequence [B, P+R, L, k] to the positions whose outputs score the
    response tokens, [B, R, L, k]: response token t is predicted at position P - 1 + t (the last prompt token for
    t = 0), so entry t is the routing that directly shapes log pi(y_t)."""
    if indices.shape[1] < prompt_len + response_len - 1 or prompt_len < 1:
        raise ValueError(f"routing over {indices.shape[1]} positions cannot cover a {prompt_len}-token prompt and "
                         f"{response_len} response tokens")
    return indices[:, prompt_len - 1:prompt_len - 1 + response_len]


def verl_load_mask(response_mask: torch.Tensor) -> torch.Tensor:
    """The positions verl counts for its rollout load balance, bool [B, R]: response tokens as inputs, each
    sequence's last valid one dropped (it is sampled but never fed back, so it has no routing;
    verl/trainer/ppo/metric_utils.py `_compute_rollout_moe_load_counts`)."""
    mask = response_mask.bool()
    positions = torch.arange(mask.shape[1], device=mask.device)
    last = torch.where(mask, positions, torch.full_like(positions, -1)).amax(dim=-1, keepdim=True)
    return mask & (positions.unsqueeze(0) != last)

"""Loss aggregation: a [B, T] per-token loss matrix and its mask -> one scalar, as verl 0.9.1's `agg_loss`.

Modes (verl names):
- ``token-mean``: sum of masked token losses / number of valid tokens.
- ``token-sum``: sum of masked token losses.
- ``seq-mean-token-sum``: per-sequence token sum, averaged over non-empty sequences.
- ``seq-mean-token-mean``: per-sequence token mean (verl divides by ``n_tokens + 1e-8``), averaged over
  non-empty sequences. GSPO's paper aggregation.
- ``seq-mean-token-sum-norm``: ``seq-mean-token-sum`` divided by ``loss_scale_factor`` (default: T, the
  padded horizon, as Dr. GRPO).

Global normalisation (for gradient accumulation over micro-batches): pass ``batch_num_tokens`` (token-mean)
or ``global_batch_size`` (seq-mean-*) counted over the whole mini-batch, and the micro-batch losses then sum
to the mini-batch loss, exactly as verl does with ``config.global_batch_info``. verl's ``dp_size`` is not
modelled: this is single-device code (dp_size = 1, where verl's extra ``* dp_size`` is a no-op).

One deliberate difference: when the local denominator is zero (every row of the batch is empty, i.e. the
mask is all zero) verl returns 0/0 = NaN, which would poison the weights; here the loss is 0 (still attached
to the graph, so backward gives zero gradients). Everywhere else the value and gradient equal verl's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from gspo_cli.errors import ConfigError
from gspo_cli.registry import Registry

if TYPE_CHECKING:
    import torch  # imported inside the functions: the preset schema reads the names, and must not import torch

__all__ = ["AGGREGATIONS", "LOSS_AGG_MODES", "PRESET_AGG_MODES", "PresetAggMode", "agg_loss", "masked_mean", "masked_sum"]

# (loss_mat, loss_mask, *, batch_num_tokens, global_batch_size, loss_scale_factor) -> scalar
Aggregator: TypeAlias = Callable[..., Any]


@dataclass(frozen=True)
class Aggregation:
    """One loss_agg_mode: its aggregator, and whether a preset may pick it (`algorithm.loss_agg_mode`).

    token-sum is the one a preset may not: the schema never offered it (verl 0.9.1's actor config accepts all five,
    verl/workers/config/actor.py `valid_loss_agg_modes`; offering it is a change of behaviour, not made here)."""

    fn: Aggregator
    in_presets: bool = True


# verl's loss_agg_mode name -> its aggregation, registered where each is defined (gspo_cli/registry.py pattern).
AGGREGATIONS: Registry[Aggregation] = Registry("loss aggregation", key="loss_agg_mode")


def register_aggregation(name: str, *, in_presets: bool = True) -> Callable[[Aggregator], Aggregator]:
    return AGGREGATIONS.register_as(name, lambda fn: Aggregation(fn, in_presets))


def masked_sum(values: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Sum of `values` where `mask` is set; NaN/inf outside the mask do not leak in (verl's masked_sum)."""
    import torch

    valid = torch.where(mask.bool(), values, torch.zeros_like(values))
    return (valid * mask).sum() if dim is None else (valid * mask).sum(dim=dim)


def masked_mean(values: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """verl's masked_mean: masked sum / (mask count + 1e-8); 0 for an all-zero mask."""
    count = mask.sum() if dim is None else mask.sum(dim=dim)
    return masked_sum(values, mask, dim) / (count + 1e-8)


def _nonzero_or_one(x: torch.Tensor) -> torch.Tensor:
    import torch

    # The numerator is exactly 0 whenever this denominator is 0, so 0/1 = 0 instead of verl's NaN.
    return torch.where(x != 0, x, torch.ones_like(x))


def _seq_mean(seq_losses: torch.Tensor, seq_mask: torch.Tensor, global_batch_size: float | None) -> torch.Tensor:
    denom: float | torch.Tensor = _nonzero_or_one(seq_mask.sum()) if global_batch_size is None else global_batch_size
    return masked_sum(seq_losses, seq_mask) / denom


@register_aggregation("token-mean")
def _token_mean(loss_mat, loss_mask, *, batch_num_tokens, global_batch_size, loss_scale_factor):
    if batch_num_tokens is None:
        batch_num_tokens = _nonzero_or_one(loss_mask.sum())
    return masked_sum(loss_mat, loss_mask) / batch_num_tokens


@register_aggregation("token-sum", in_presets=False)
def _token_sum(loss_mat, loss_mask, *, batch_num_tokens, global_batch_size, loss_scale_factor):
    return masked_sum(loss_mat, loss_mask)


@register_aggregation("seq-mean-token-sum")
def _seq_mean_token_sum(loss_mat, loss_mask, *, batch_num_tokens, global_batch_size, loss_scale_factor):
    import torch

    seq_losses = torch.sum(loss_mat * loss_mask, dim=-1)
    seq_mask = (torch.sum(loss_mask, dim=-1) > 0).to(loss_mat.dtype)  # fully masked rows do not count
    return _seq_mean(seq_losses, seq_mask, global_batch_size)


@register_aggregation("seq-mean-token-mean")
def _seq_mean_token_mean(loss_mat, loss_mask, *, batch_num_tokens, global_batch_size, loss_scale_factor):
    import torch

    n_tokens = torch.sum(loss_mask, dim=-1)
    seq_losses = torch.sum(loss_mat * loss_mask, dim=-1) / (n_tokens + 1e-8)  # verl's epsilon, kept for parity
    seq_mask = (n_tokens > 0).to(loss_mat.dtype)
    return _seq_mean(seq_losses, seq_mask, global_batch_size)


@register_aggregation("seq-mean-token-sum-norm")
def _seq_mean_token_sum_norm(loss_mat, loss_mask, *, batch_num_tokens, global_batch_size, loss_scale_factor):
    loss = _seq_mean_token_sum(
        loss_mat, loss_mask, batch_num_tokens=None, global_batch_size=global_batch_size, loss_scale_factor=None
    )
    return loss / (loss_scale_factor if loss_scale_factor is not None else loss_mask.shape[-1])


# The registered modes in definition order (the "use one of" hint of an unknown mode lists them so).
LOSS_AGG_MODES = tuple(AGGREGATIONS)
# The modes a preset may pick: the schema's `algorithm.loss_agg_mode` values.
PRESET_AGG_MODES = tuple(name for name, entry in AGGREGATIONS.items() if entry.in_presets)
if TYPE_CHECKING:  # mypy takes no computed Literal; pydantic does (its refusal lists the values in this order)
    PresetAggMode = str
else:
    PresetAggMode = Literal[PRESET_AGG_MODES]


def agg_loss(
    loss_mat: torch.Tensor,
    mask: torch.Tensor,
    mode: str,
    *,
    batch_num_tokens: float | torch.Tensor | None = None,
    global_batch_size: float | torch.Tensor | None = None,
    loss_scale_factor: float | None = None,
) -> torch.Tensor:
    """Aggregate a [B, T] loss matrix to a scalar with verl's `loss_agg_mode` semantics (see module doc)."""
    try:
        fn = AGGREGATIONS[mode].fn
    except KeyError:
        raise ConfigError(f"unknown loss_agg_mode {mode!r}", hint=f"use one of: {', '.join(LOSS_AGG_MODES)}") from None
    mask = mask.to(loss_mat.dtype)
    return fn(
        loss_mat,
        mask,
        batch_num_tokens=batch_num_tokens,
        global_batch_size=global_batch_size,
        loss_scale_factor=loss_scale_factor,
    )

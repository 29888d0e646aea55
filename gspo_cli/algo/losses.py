"""Policy losses (GSPO, GSPO-token, vanilla PPO/GRPO) behind one registry, with verl 0.9.1's semantics.

All inputs are token-level [B, T] tensors as in verl: `log_prob` (current policy, carries the gradient),
`old_log_prob` (the rollout/old policy), `advantages` and `response_mask` (1 on response tokens).

- ``gspo_token``: verl's `compute_policy_loss_gspo` line for line. Sequence log-ratio
  log s_i = masked token mean of (logp - logp_old) (empty rows: 0, via verl's `clamp(min=1)` on the length);
  token form log s_it = logp - sg(logp) + sg(log s_i), clamped at max 10; per-token loss
  max(-A_it s_it, -A_it clip(s_it, 1 - lo, 1 + hi)); aggregated with `loss_agg_mode`. This is the paper's
  GSPO-token: the forward value of s_it is s_i, but each token keeps its own advantage.
- ``gspo``: sequence-level GSPO. Each sequence's advantage is the masked token mean of `advantages` (for GRPO
  outcome advantages, which are constant over a response, that is exactly A_i), then as ``gspo_token``; so the
  whole sequence is clipped or not, as in the paper. With constant per-sequence advantages the two are equal.
- ``vanilla``: verl's `compute_policy_loss_vanilla`: token ratio exp(clamp(logp - logp_old, -20, 20)), PPO clip,
  and dual-clip at `clip_ratio_c` for negative advantages.

Not modelled from verl: the `config` object (its clip_ratio_low/high/c, loss_scale_factor and
global_batch_info are explicit arguments here; its `clip_ratio` fallback for a None low/high is not),
`rollout_is_weights` (rollout importance-sampling correction, unused by the native engine), and `dp_size`
(single device). Deviations, both only where verl would return NaN: an all-empty batch gives 0 (see
`aggregation.py`), and `compute_policy_loss` zeroes the inputs at padded positions first, so non-finite
padding cannot leak in (verl multiplies by the mask, and NaN * 0 = NaN). On finite inputs: verl's numbers.

Metrics (python floats): ``pg_clipfrac`` (token-masked fraction where the clipped term is chosen), ``ppo_kl``
(masked mean of logp_old - logp), ``pg_clipfrac_lower`` (dual-clip fraction; 0 for GSPO as in verl),
``seq_clipfrac`` (fraction of non-empty sequences with at least one clipped token; for ``gspo`` a sequence is
clipped as a whole) and, for the GSPO losses, ``seq_ratio_mean`` (mean s_i over non-empty sequences, after
the clamp).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from gspo_cli.errors import ConfigError
from gspo_cli.registry import Registry

# torch is imported inside the functions: the preset schema reads this registry's names (algorithm.loss_mode)
# when `gspo presets show` validates a preset, which must not load torch.
if TYPE_CHECKING:
    import torch

__all__ = [
    "DEFAULT_POLICY_LOSS",
    "GSPO_CLIP_BAND",
    "POLICY_LOSSES",
    "PolicyLoss",
    "VERL_LOSS_NAMES",
    "LossConfig",
    "PolicyLossOutput",
    "compute_policy_loss",
    "gspo_loss",
    "gspo_token_loss",
    "register_policy_loss",
    "sequence_log_ratio",
    "vanilla_loss",
]

# verl's default dual-clip bound; the preset schema's algorithm.clip_ratio_c takes its default from here.
DEFAULT_CLIP_RATIO_C: float = 3.0
DEFAULT_POLICY_LOSS = "gspo"  # the preset schema's algorithm.loss_mode default
LOG_RATIO_MAX = 10.0  # verl clamps the GSPO log-ratio here "for numerical stability"
VANILLA_LOG_RATIO_CLAMP = 20.0  # verl clamps the token log-ratio to [-20, 20] in the vanilla loss


@dataclass(frozen=True)
class LossConfig:
    """The knobs every policy loss receives (verl: ActorConfig fields + global_batch_info)."""

    clip_ratio_low: float
    clip_ratio_high: float
    clip_ratio_c: float = DEFAULT_CLIP_RATIO_C  # dual-clip bound, vanilla only
    loss_agg_mode: str = "seq-mean-token-mean"
    batch_num_tokens: float | torch.Tensor | None = None  # token-mean over a larger (mini-)batch
    global_batch_size: float | torch.Tensor | None = None  # seq-mean-* over a larger (mini-)batch
    loss_scale_factor: float | None = None  # seq-mean-token-sum-norm divisor (default: T)

    def aggregate(self, loss_mat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        from gspo_cli.algo.aggregation import agg_loss

        return agg_loss(
            loss_mat,
            mask,
            self.loss_agg_mode,
            batch_num_tokens=self.batch_num_tokens,
            global_batch_size=self.global_batch_size,
            loss_scale_factor=self.loss_scale_factor,
        )


@dataclass
class PolicyLossOutput:
    loss: torch.Tensor  # scalar, differentiable w.r.t. log_prob
    metrics: dict[str, float] = field(default_factory=dict)


PolicyLossFn: TypeAlias = (
    "Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, LossConfig], PolicyLossOutput]"
)

# The loss's default healthy band of actor/pg_clipfrac (trainer.health.clip_fraction when the preset sets no
# low/high; metrics/health.py). GSPO's band: metrics/bands.py CLIP_FRACTION takes its limits from here and gives the
# sources. Vanilla's: the GSPO paper's GRPO figure, 0.0013, x40.
GSPO_CLIP_BAND: tuple[float, float] = (0.02, 0.5)
OPEN_CLIP_BAND: tuple[float, float] = (0.0, 1.0)  # a loss registered without a band: the rule never fires


@dataclass(frozen=True)
class PolicyLoss:
    """One registered policy loss and its facts."""

    fn: PolicyLossFn  # the loss itself
    verl: str | None = None  # verl 0.9.1's loss with the same semantics (its registry, core_algos.py); None: native only
    clip_band: tuple[float, float] = OPEN_CLIP_BAND  # (low, high) default clip-fraction band
    clip_band_cited: bool = False  # True: the band is bands.CLIP_FRACTION, whose check and source end the message


# The open registry: name -> loss entry. `algorithm.loss_mode` accepts exactly these names (config/schema.py), the
# native engine runs each of them, and verl runs those with a `verl` name (config/engine_support.py).
# (A gspo_cli.registry.Registry: the one registry pattern; engines, job kinds, eval and reward backends and health
# rules follow this one.)
POLICY_LOSSES: Registry[PolicyLoss] = Registry("policy loss", key="algorithm.loss_mode")


def register_policy_loss(
    name: str, *, verl: str | None = None, clip_band: tuple[float, float] = OPEN_CLIP_BAND, clip_band_cited: bool = False
) -> Callable[[PolicyLossFn], PolicyLossFn]:
    """Register a policy loss under `name`; `verl` names verl's equal loss when verl has one (else native only),
    `clip_band` its healthy clip-fraction band (`clip_band_cited`: the sourced GSPO band of metrics/bands.py)."""
    return POLICY_LOSSES.register_as(name, lambda fn: PolicyLoss(fn, verl, clip_band, clip_band_cited))


class _VerlLossNames(Mapping[str, str]):
    """name -> verl's loss name, for the losses that have one: a live view of POLICY_LOSSES (a loss registered
    later shows up), not a second table."""

    def __getitem__(self, name: str) -> str:
        verl = POLICY_LOSSES[name].verl
        if verl is None:
            raise KeyError(name)
        return verl

    def __iter__(self) -> Iterator[str]:
        return (name for name, loss in POLICY_LOSSES.items() if loss.verl is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


VERL_LOSS_NAMES: Mapping[str, str] = _VerlLossNames()


def _to_floats(named: dict[str, torch.Tensor]) -> dict[str, float]:
    import torch

    # One device->host transfer for all metrics instead of one `.item()` each.
    values = torch.stack([v.detach().to(torch.float64).reshape(()) for v in named.values()]).tolist()
    return dict(zip(named.keys(), values, strict=True))


def _seq_clipfrac(clipped: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    import torch

    nonempty = mask.sum(dim=-1) > 0
    any_clipped = (clipped * mask).sum(dim=-1) > 0
    n = nonempty.sum().clamp(min=1)
    return (any_clipped & nonempty).sum().to(torch.float64) / n


def sequence_log_ratio(log_prob: torch.Tensor, old_log_prob: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log s_i = (1/|y_i|) sum_t (logp - logp_old) over the response; 0 for an empty row (verl)."""
    import torch

    lengths = torch.sum(mask, dim=-1).clamp(min=1)
    return torch.sum((log_prob - old_log_prob) * mask, dim=-1) / lengths


def _gspo_core(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, cfg: LossConfig
) -> PolicyLossOutput:
    import torch

    from gspo_cli.algo.aggregation import masked_mean

    negative_approx_kl = log_prob - old_log_prob
    log_s = sequence_log_ratio(log_prob, old_log_prob, mask)
    # Value = log s_i on every token; gradient = d logp_t (the "sg" trick of the GSPO-token formulation).
    log_s_tok = torch.clamp(log_prob - log_prob.detach() + log_s.detach().unsqueeze(-1), max=LOG_RATIO_MAX)
    s_tok = torch.exp(log_s_tok)
    losses1 = -advantages * s_tok
    losses2 = -advantages * torch.clamp(s_tok, 1 - cfg.clip_ratio_low, 1 + cfg.clip_ratio_high)
    loss = cfg.aggregate(torch.maximum(losses1, losses2), mask)

    with torch.no_grad():
        clipped = torch.gt(losses2, losses1).to(log_prob.dtype)
        nonempty = (mask.sum(dim=-1) > 0).to(log_prob.dtype)
        metrics = _to_floats(
            {
                "pg_clipfrac": masked_mean(clipped, mask),
                "ppo_kl": masked_mean(-negative_approx_kl, mask),
                "pg_clipfrac_lower": torch.zeros((), dtype=log_prob.dtype, device=log_prob.device),
                "seq_clipfrac": _seq_clipfrac(clipped, mask),
                "seq_ratio_mean": (torch.exp(torch.clamp(log_s, max=LOG_RATIO_MAX)) * nonempty).sum()
                / nonempty.sum().clamp(min=1),
            }
        )
    return PolicyLossOutput(loss=loss, metrics=metrics)


# verl's "gspo" (compute_policy_loss_gspo) is the token form; with GRPO's per-sequence advantages it equals this.
@register_policy_loss("gspo", verl="gspo", clip_band=GSPO_CLIP_BAND, clip_band_cited=True)
def gspo_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, response_mask: torch.Tensor,
    cfg: LossConfig,
) -> PolicyLossOutput:
    """Sequence-level GSPO: one advantage per sequence (masked token mean), then GSPO-token."""
    import torch

    mask = response_mask.to(log_prob.dtype)
    seq_adv = torch.sum(advantages * mask, dim=-1) / torch.sum(mask, dim=-1).clamp(min=1)
    return _gspo_core(log_prob, old_log_prob, seq_adv.unsqueeze(-1) * mask, mask, cfg)


@register_policy_loss("gspo_token", verl="gspo", clip_band=GSPO_CLIP_BAND, clip_band_cited=True)
def gspo_token_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, response_mask: torch.Tensor,
    cfg: LossConfig,
) -> PolicyLossOutput:
    """GSPO-token: verl's `compute_policy_loss_gspo` exactly (token advantages used as given)."""
    return _gspo_core(log_prob, old_log_prob, advantages, response_mask.to(log_prob.dtype), cfg)


@register_policy_loss("vanilla", verl="vanilla", clip_band=(0.0, 0.05))
def vanilla_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, response_mask: torch.Tensor,
    cfg: LossConfig,
) -> PolicyLossOutput:
    """Token-level PPO/GRPO clipped loss with dual clip: verl's `compute_policy_loss_vanilla`."""
    if not cfg.clip_ratio_c > 1.0:
        raise ConfigError(f"clip_ratio_c must be > 1.0 for dual-clip PPO, got {cfg.clip_ratio_c}")
    import torch

    from gspo_cli.algo.aggregation import masked_mean

    mask = response_mask.to(log_prob.dtype)
    negative_approx_kl = torch.clamp(log_prob - old_log_prob, min=-VANILLA_LOG_RATIO_CLAMP, max=VANILLA_LOG_RATIO_CLAMP)
    ratio = torch.exp(negative_approx_kl)
    losses1 = -advantages * ratio
    losses2 = -advantages * torch.clamp(ratio, 1 - cfg.clip_ratio_low, 1 + cfg.clip_ratio_high)
    clip_losses1 = torch.maximum(losses1, losses2)
    losses3 = -advantages * cfg.clip_ratio_c
    clip_losses2 = torch.min(losses3, clip_losses1)
    pg_losses = torch.where(advantages < 0, clip_losses2, clip_losses1)
    loss = cfg.aggregate(pg_losses, mask)

    with torch.no_grad():
        clipped = torch.gt(losses2, losses1).to(log_prob.dtype)
        lower = (torch.gt(clip_losses1, losses3) & (advantages < 0)).to(log_prob.dtype)
        metrics = _to_floats(
            {
                "pg_clipfrac": masked_mean(clipped, mask),
                "ppo_kl": masked_mean(-negative_approx_kl, mask),
                "pg_clipfrac_lower": masked_mean(lower, mask),
                "seq_clipfrac": _seq_clipfrac(torch.maximum(clipped, lower), mask),
            }
        )
    return PolicyLossOutput(loss=loss, metrics=metrics)


def compute_policy_loss(
    name: str,
    *,
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    clip_ratio_low: float,
    clip_ratio_high: float,
    loss_agg_mode: str = "seq-mean-token-mean",
    clip_ratio_c: float = DEFAULT_CLIP_RATIO_C,
    batch_num_tokens: float | torch.Tensor | None = None,
    global_batch_size: float | torch.Tensor | None = None,
    loss_scale_factor: float | None = None,
) -> PolicyLossOutput:
    """Look up `name` in POLICY_LOSSES and apply it. All tensors are [B, T]; see the module doc."""
    import torch

    try:
        fn = POLICY_LOSSES[name].fn
    except KeyError:
        raise ConfigError(
            f"unknown policy loss {name!r}", hint=f"use one of: {', '.join(sorted(POLICY_LOSSES))}"
        ) from None
    shapes = {tuple(t.shape) for t in (log_prob, old_log_prob, advantages, response_mask)}
    if len(shapes) != 1 or log_prob.dim() != 2:
        raise ValueError(
            "log_prob, old_log_prob, advantages and response_mask must all be [B, T]; got "
            f"{[tuple(t.shape) for t in (log_prob, old_log_prob, advantages, response_mask)]}"
        )
    # Zero the padding: for finite inputs this changes no value or gradient (verl's results do not depend on
    # padded entries either), but NaN/inf/huge pad values (e.g. -inf log-probs of pad tokens) can no longer
    # turn the loss or the gradient into NaN through `x * 0` or `inf - inf`.
    valid = response_mask.bool()
    log_prob, old_log_prob, advantages = (
        torch.where(valid, x, torch.zeros_like(x)) for x in (log_prob, old_log_prob, advantages)
    )
    cfg = LossConfig(
        clip_ratio_low=clip_ratio_low,
        clip_ratio_high=clip_ratio_high,
        clip_ratio_c=clip_ratio_c,
        loss_agg_mode=loss_agg_mode,
        batch_num_tokens=batch_num_tokens,
        global_batch_size=global_batch_size,
        loss_scale_factor=loss_scale_factor,
    )
    return fn(log_prob, old_log_prob, advantages, response_mask, cfg)

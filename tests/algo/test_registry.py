"""The policy-loss registry, GSPO vs GSPO-token, aggregation modes and the empty-batch guard."""

from __future__ import annotations

import pytest
import torch

from gspo_cli.algo.advantages import broadcast_to_tokens
from gspo_cli.algo.aggregation import LOSS_AGG_MODES, agg_loss
from gspo_cli.algo.losses import (
    POLICY_LOSSES,
    LossConfig,
    PolicyLossOutput,
    compute_policy_loss,
    gspo_loss,
    gspo_token_loss,
    register_policy_loss,
    vanilla_loss,
)
from gspo_cli.config.presets import load_preset
from gspo_cli.errors import ConfigError


def batch(seed: int = 0, b: int = 6, t: int = 8, drift: float = 0.3):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, t + 1, (b,), generator=g)
    lengths[1] = 0  # an empty row
    lengths[0] = t
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).double()
    old = -torch.rand(b, t, generator=g, dtype=torch.float64) * 2
    new = old + drift * torch.randn(b, t, generator=g, dtype=torch.float64)
    seq_adv = torch.randn(b, generator=g, dtype=torch.float64)
    return old, new, mask, seq_adv


def run(name, old, new, mask, adv, **kw):
    lp = new.clone().requires_grad_(True)
    kw = {"clip_ratio_low": 0.2, "clip_ratio_high": 0.28, **kw}
    out = compute_policy_loss(name, log_prob=lp, old_log_prob=old, advantages=adv, response_mask=mask, **kw)
    (grad,) = torch.autograd.grad(out.loss, lp)
    return out, grad


def test_registry_names_and_dispatch():
    assert {"gspo", "gspo_token", "vanilla"} <= set(POLICY_LOSSES)
    assert POLICY_LOSSES["gspo"].fn is gspo_loss
    assert POLICY_LOSSES["gspo_token"].fn is gspo_token_loss
    assert POLICY_LOSSES["vanilla"].fn is vanilla_loss
    old, new, mask, seq_adv = batch(drift=0.5)
    adv = broadcast_to_tokens(seq_adv, mask)
    losses = {}
    for name, entry in POLICY_LOSSES.items():
        out, _ = run(name, old, new, mask, adv)
        direct = entry.fn(new, old, adv, mask, LossConfig(clip_ratio_low=0.2, clip_ratio_high=0.28))
        assert isinstance(out, PolicyLossOutput)
        torch.testing.assert_close(out.loss, direct.loss)
        assert out.metrics == direct.metrics
        losses[name] = out.loss.item()
    # Token-level clipping differs from sequence-level clipping on the same data.
    assert losses["vanilla"] != pytest.approx(losses["gspo"])


def test_unknown_loss_and_mode_are_config_errors():
    old, new, mask, seq_adv = batch()
    adv = broadcast_to_tokens(seq_adv, mask)
    with pytest.raises(ConfigError) as e:
        run("gspo_seq", old, new, mask, adv)
    assert "gspo_token" in e.value.hint
    with pytest.raises(ConfigError) as e:
        run("gspo", old, new, mask, adv, loss_agg_mode="seq-mean")
    assert "seq-mean-token-mean" in e.value.hint
    with pytest.raises(ValueError):
        run("gspo", old, new[:, :-1], mask, adv)


def test_register_a_new_loss_is_selectable():
    @register_policy_loss("test_only_neg_mean_logp")
    def neg_mean_logp(log_prob, old_log_prob, advantages, response_mask, cfg):
        return PolicyLossOutput(loss=cfg.aggregate(-log_prob, response_mask), metrics={})

    try:
        old, new, mask, seq_adv = batch()
        out, grad = run("test_only_neg_mean_logp", old, new, mask, broadcast_to_tokens(seq_adv, mask))
        assert out.loss.item() == pytest.approx(agg_loss(-new, mask, "seq-mean-token-mean").item())
        with pytest.raises(ValueError):
            register_policy_loss("test_only_neg_mean_logp")(neg_mean_logp)
        # A preset can select it right away: the native engine runs every registered loss; verl only those
        # registered with a verl= equal, so it refuses this one when the preset is loaded, naming the key.
        native = load_preset("tiny", ["algorithm.loss_mode=test_only_neg_mean_logp"])
        assert native.algorithm.loss_mode == "test_only_neg_mean_logp"
        with pytest.raises(ConfigError) as refused:
            load_preset("tiny-verl", ["algorithm.loss_mode=test_only_neg_mean_logp"])
        assert "algorithm.loss_mode: test_only_neg_mean_logp is not supported by the verl engine" in str(refused.value)
    finally:
        del POLICY_LOSSES["test_only_neg_mean_logp"]


@pytest.mark.parametrize("mode", LOSS_AGG_MODES)
@pytest.mark.parametrize("seed", range(5))
def test_gspo_token_with_constant_advantages_equals_gspo(mode, seed):
    old, new, mask, seq_adv = batch(seed, drift=0.4)
    adv = broadcast_to_tokens(seq_adv, mask)
    a, ga = run("gspo", old, new, mask, adv, loss_agg_mode=mode)
    b, gb = run("gspo_token", old, new, mask, adv, loss_agg_mode=mode)
    torch.testing.assert_close(a.loss, b.loss, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(ga, gb, atol=1e-12, rtol=1e-12)
    assert a.metrics == pytest.approx(b.metrics, abs=1e-12)


def test_gspo_differs_from_gspo_token_for_token_advantages():
    """Sequence-level GSPO uses one advantage per sequence (the masked mean); GSPO-token keeps each A_it."""
    old, new, mask, _ = batch(3, drift=0.4)
    adv = torch.randn(mask.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * mask
    a, ga = run("gspo", old, new, mask, adv)
    b, gb = run("gspo_token", old, new, mask, adv)
    assert not torch.allclose(ga, gb)
    seq_mean = (adv.sum(-1) / mask.sum(-1).clamp(min=1)).unsqueeze(-1) * mask
    c, gc = run("gspo_token", old, new, mask, seq_mean)
    torch.testing.assert_close(a.loss, c.loss, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(ga, gc, atol=1e-12, rtol=1e-12)


def test_gspo_clips_whole_sequences():
    old, new, mask, seq_adv = batch(7, drift=0.6)
    out, grad = run(
        "gspo", old, new, mask, broadcast_to_tokens(seq_adv, mask), clip_ratio_low=0.01, clip_ratio_high=0.01
    )
    rows = mask.sum(-1) > 0
    clipped_tokens = (grad == 0) & (mask > 0)
    # Every non-empty row is either all-clipped or all-unclipped.
    per_row = clipped_tokens.sum(-1)
    assert bool(((per_row == 0) | (per_row == mask.sum(-1)))[rows].all())
    frac = float((per_row[rows] > 0).double().mean())
    assert out.metrics["seq_clipfrac"] == pytest.approx(frac)
    assert 0 < frac < 1


@pytest.mark.parametrize("name", sorted(["gspo", "gspo_token", "vanilla"]))
@pytest.mark.parametrize("mode", LOSS_AGG_MODES)
def test_all_empty_batch_gives_zero_loss_and_grad(name, mode):
    """verl returns NaN here (0/0); a NaN loss would poison the weights, so ours is a graph-attached zero."""
    old, new, _, seq_adv = batch()
    mask = torch.zeros_like(old)
    out, grad = run(name, old, new, mask, broadcast_to_tokens(seq_adv, mask), loss_agg_mode=mode)
    assert out.loss.item() == 0.0
    assert torch.count_nonzero(grad) == 0
    assert out.metrics["pg_clipfrac"] == 0.0 and out.metrics["seq_clipfrac"] == 0.0


@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm"])
def test_micro_batches_with_global_counts_sum_to_the_full_batch(mode):
    """Gradient accumulation: micro-batch losses normalised by mini-batch counts add up to the mini-batch loss."""
    old, new, mask, seq_adv = batch(11, b=8, t=6, drift=0.3)
    adv = broadcast_to_tokens(seq_adv, mask)
    full, g_full = run("gspo", old, new, mask, adv, loss_agg_mode=mode)
    counts = {"global_batch_size": float((mask.sum(-1) > 0).sum()), "batch_num_tokens": float(mask.sum())}
    total, grads = 0.0, []
    for sl in (slice(0, 3), slice(3, 8)):
        out, g = run("gspo", old[sl], new[sl], mask[sl], adv[sl], loss_agg_mode=mode, loss_scale_factor=6, **counts)
        total += out.loss.item()
        grads.append(g)
    assert total == pytest.approx(full.loss.item(), abs=1e-12)
    torch.testing.assert_close(torch.cat(grads), g_full, atol=1e-12, rtol=1e-10)


def test_vanilla_dual_clip_metric_and_guard():
    old = torch.zeros(1, 3, dtype=torch.float64)
    new = torch.tensor([[2.0, 0.0, -0.5]], dtype=torch.float64)  # ratios e^2 (> clip_ratio_c 3), 1, e^-0.5
    mask = torch.ones(1, 3, dtype=torch.float64)
    adv = torch.full((1, 3), -1.0, dtype=torch.float64)
    out, grad = run("vanilla", old, new, mask, adv)
    # Token 0: dual-clipped (loss capped at 3 * |A|, zero grad); token 2: PPO-clipped at 1 - 0.2 (zero grad).
    assert out.metrics["pg_clipfrac_lower"] == pytest.approx(1 / 3)
    assert out.metrics["pg_clipfrac"] == pytest.approx(1 / 3)
    assert grad[0, 0] == 0 and grad[0, 2] == 0 and grad[0, 1] != 0
    assert out.metrics["seq_clipfrac"] == 1.0
    with pytest.raises(ConfigError):
        run("vanilla", old, new, mask, adv, clip_ratio_c=1.0)


def test_metrics_are_plain_floats_and_loss_is_scalar():
    old, new, mask, seq_adv = batch()
    for name in ("gspo", "gspo_token", "vanilla"):
        out, _ = run(name, old, new, mask, broadcast_to_tokens(seq_adv, mask))
        assert out.loss.dim() == 0
        assert {"pg_clipfrac", "ppo_kl", "pg_clipfrac_lower", "seq_clipfrac"} <= set(out.metrics)
        assert all(type(v) is float for v in out.metrics.values())


def test_preset_loss_agg_modes_are_the_registry_entries_offered_to_presets():
    """algorithm.loss_agg_mode's values come from the aggregation registry (no second list in the schema): the four
    offered modes in registration order, token-sum registered but not offered, pydantic's refusal as before."""
    import subprocess
    import sys

    from pydantic import ValidationError

    from gspo_cli.algo.aggregation import AGGREGATIONS, PRESET_AGG_MODES
    from gspo_cli.config.schema import AlgorithmSection

    assert PRESET_AGG_MODES == ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm")
    assert "token-sum" in AGGREGATIONS and not AGGREGATIONS["token-sum"].in_presets
    for mode in PRESET_AGG_MODES:
        assert AlgorithmSection(loss_agg_mode=mode).loss_agg_mode == mode
    with pytest.raises(ValidationError) as info:
        AlgorithmSection(loss_agg_mode="token-sum")  # control: registered, not offered
    assert ("Input should be 'token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean' or 'seq-mean-token-sum-norm'"
            in str(info.value))
    # reading the names costs no torch import (the schema reads them at `gspo --help`)
    code = "import sys, gspo_cli.algo.aggregation as a; assert a.PRESET_AGG_MODES; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"

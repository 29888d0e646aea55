"""Properties: advantage invariances (hypothesis), padding that cannot leak, devices."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gspo_cli.algo.advantages import broadcast_to_tokens, grpo_outcome_advantages
from gspo_cli.algo.losses import compute_policy_loss

scores_and_groups = st.integers(min_value=1, max_value=24).flatmap(
    lambda b: st.tuples(
        st.lists(st.floats(-100, 100, allow_nan=False, width=64), min_size=b, max_size=b),
        st.lists(st.sampled_from("abcdefg"), min_size=b, max_size=b),
    )
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(scores_and_groups, st.booleans(), st.randoms(use_true_random=False))
def test_advantages_invariances(data, norm, rnd):
    scores_list, ids = data
    scores = torch.tensor(scores_list, dtype=torch.float64)
    adv = grpo_outcome_advantages(scores, ids, norm_by_std=norm)
    assert adv.shape == scores.shape and torch.isfinite(adv).all()
    # Each group of >= 2 is centred; a group of one keeps its raw score (mean 0, std 1).
    for g in set(ids):
        idx = [i for i, x in enumerate(ids) if x == g]
        if len(idx) > 1:
            assert abs(float(adv[idx].sum())) <= 1e-6 * max(1.0, float(scores[idx].abs().max()))
        else:
            expected = scores[idx] / (1 + 1e-6) if norm else scores[idx]
            torch.testing.assert_close(adv[idx], expected)
    # Permuting the batch permutes the advantages (groups are by id, not by position).
    perm = list(range(len(ids)))
    rnd.shuffle(perm)
    adv_p = grpo_outcome_advantages(scores[perm], [ids[i] for i in perm], norm_by_std=norm)
    torch.testing.assert_close(adv_p, adv[perm])
    # Shifting one group's scores by a constant leaves every advantage unchanged, unless it is a singleton.
    g0 = ids[0]
    members = [i for i, x in enumerate(ids) if x == g0]
    if len(members) > 1:
        shifted = scores.clone()
        shifted[members] += 7.0
        # The shift moves the group mean's rounding by up to a few ulps of the shifted scores; a group whose scores
        # are all equal (std 0) divides that residue by epsilon (1e-6), as verl's torch.mean / torch.std do.
        rounding = 8 * torch.finfo(torch.float64).eps * float(shifted.abs().max()) / (1e-6 if norm else 1.0)
        torch.testing.assert_close(grpo_outcome_advantages(shifted, ids, norm_by_std=norm), adv,
                                   atol=1e-9 + rounding, rtol=1e-6)


def test_group_ids_as_tensor_elements():
    """A list of 0-d tensors must group by value, not by object identity."""
    scores = torch.tensor([1.0, 0.0, 1.0, 1.0])
    ids = [torch.tensor(3), torch.tensor(3), torch.tensor(5), torch.tensor(5)]
    torch.testing.assert_close(grpo_outcome_advantages(scores, ids), grpo_outcome_advantages(scores, [3, 3, 5, 5]))


@pytest.mark.parametrize("name", ["gspo", "gspo_token", "vanilla"])
@pytest.mark.parametrize("garbage", [float("nan"), float("inf"), float("-inf"), 1e30])
def test_padding_values_cannot_leak(name, garbage):
    g = torch.Generator().manual_seed(0)
    b, t = 5, 7
    lengths = torch.tensor([7, 3, 0, 5, 1])
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).double()
    old = -torch.rand(b, t, generator=g, dtype=torch.float64)
    new = old + 0.3 * torch.randn(b, t, generator=g, dtype=torch.float64)
    adv = broadcast_to_tokens(torch.randn(b, generator=g, dtype=torch.float64), mask)

    def run(lp, old_lp, a):
        lp = lp.clone().requires_grad_(True)
        out = compute_policy_loss(
            name, log_prob=lp, old_log_prob=old_lp, advantages=a, response_mask=mask,
            clip_ratio_low=0.2, clip_ratio_high=0.28,
        )  # fmt: skip
        return out, torch.autograd.grad(out.loss, lp)[0]

    clean, g_clean = run(new, old, adv)
    pad = mask == 0
    dirty, g_dirty = run(new.masked_fill(pad, garbage), old.masked_fill(pad, garbage), adv.masked_fill(pad, garbage))
    assert torch.isfinite(dirty.loss) and torch.isfinite(g_dirty).all()
    torch.testing.assert_close(dirty.loss, clean.loss)
    torch.testing.assert_close(g_dirty, g_clean)
    assert dirty.metrics == clean.metrics
    assert torch.count_nonzero(g_dirty[pad]) == 0


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_losses_and_advantages_on_device(device, dtype):
    """Everything stays on the inputs' device and dtype; values agree with a float64 CPU reference."""
    g = torch.Generator().manual_seed(1)
    b, t = 8, 16
    lengths = torch.randint(0, t + 1, (b,), generator=g)
    mask64 = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).double()
    old64 = -torch.rand(b, t, generator=g, dtype=torch.float64) * 2
    new64 = old64 + 0.1 * torch.randn(b, t, generator=g, dtype=torch.float64)
    scores64 = (torch.rand(b, generator=g) < 0.5).double()
    ids = torch.arange(b) // 4
    tol = {torch.float32: 1e-5, torch.bfloat16: 3e-2}[dtype]

    adv = grpo_outcome_advantages(scores64.to(device, dtype), ids.to(device))
    assert adv.device.type == device and adv.dtype == dtype
    adv64 = grpo_outcome_advantages(scores64, ids)
    torch.testing.assert_close(adv.double().cpu(), adv64, atol=tol * 10, rtol=tol * 10)
    for name in ("gspo", "gspo_token", "vanilla"):
        lp = new64.to(device, dtype).requires_grad_(True)
        out = compute_policy_loss(
            name, log_prob=lp, old_log_prob=old64.to(device, dtype),
            advantages=broadcast_to_tokens(adv, mask64.to(device, dtype)), response_mask=mask64.to(device),
            clip_ratio_low=0.2, clip_ratio_high=0.28,
        )  # fmt: skip
        out.loss.backward()
        assert out.loss.device.type == device and lp.grad.device.type == device
        ref_lp = new64.clone().requires_grad_(True)
        ref = compute_policy_loss(
            name, log_prob=ref_lp, old_log_prob=old64, advantages=broadcast_to_tokens(adv64, mask64),
            response_mask=mask64, clip_ratio_low=0.2, clip_ratio_high=0.28,
        )  # fmt: skip
        ref.loss.backward()
        assert out.loss.item() == pytest.approx(ref.loss.item(), abs=tol * 10)
        if dtype == torch.float32:  # in bf16 the clip decisions near the bounds may legitimately flip
            torch.testing.assert_close(lp.grad.double().cpu(), ref_lp.grad, atol=tol, rtol=tol)

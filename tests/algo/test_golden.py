"""(a) The golden values from issue 3, computed by hand from the formulas."""

from __future__ import annotations

import math

import pytest
import torch

from gspo_cli.algo.advantages import broadcast_to_tokens, grpo_outcome_advantages
from gspo_cli.algo.losses import compute_policy_loss, sequence_log_ratio

OLD = [[-1.0, -0.7, -0.2], [-0.5, -1.2, 0.0]]
NEW = [[-0.9, -0.8, -0.1], [-0.4, -1.0, 0.0]]
MASK = [[1, 1, 1], [1, 1, 0]]
ADV = [0.866, -1.5]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_advantages_golden(dtype):
    a = grpo_outcome_advantages(torch.tensor([1.0, -1.0, -1.0, 1.0], dtype=dtype), ["p"] * 4)
    assert a.dtype == dtype
    torch.testing.assert_close(
        a, torch.tensor([0.866025, -0.866025, -0.866025, 0.866025], dtype=dtype), atol=1e-6, rtol=0
    )
    b = grpo_outcome_advantages(torch.tensor([1.0, 1.0, 1.0, -1.0], dtype=dtype), [7, 7, 7, 7])
    torch.testing.assert_close(b, torch.tensor([0.5, 0.5, 0.5, -1.499999], dtype=dtype), atol=1e-6, rtol=0)


def test_advantages_groups_singletons_and_no_std():
    scores = torch.tensor([1.0, 0.0, 3.0, 5.0, 2.0, 2.0])
    ids = ["a", "a", "solo", "b", "c", "c"]
    a = grpo_outcome_advantages(scores, ids)
    s2 = 1 / math.sqrt(2)  # unbiased std of {1, 0}
    expected = [0.5 / (s2 + 1e-6), -0.5 / (s2 + 1e-6), 3.0 / (1 + 1e-6), 5.0 / (1 + 1e-6), 0.0, 0.0]
    torch.testing.assert_close(a, torch.tensor(expected), atol=1e-6, rtol=0)
    c = grpo_outcome_advantages(scores, ids, norm_by_std=False)
    torch.testing.assert_close(c, torch.tensor([0.5, -0.5, 3.0, 5.0, 0.0, 0.0]))
    # Tensor group ids and their dense re-indexing give the same answer.
    d = grpo_outcome_advantages(scores, torch.tensor([10, 10, -3, 4, 99, 99]))
    torch.testing.assert_close(d, a)


def test_broadcast_to_tokens():
    mask = torch.tensor([[1, 1, 0], [0, 0, 0]])
    out = broadcast_to_tokens(torch.tensor([2.0, -1.0]), mask)
    torch.testing.assert_close(out, torch.tensor([[2.0, 2.0, 0.0], [0.0, 0.0, 0.0]]))


@pytest.mark.parametrize("name", ["gspo", "gspo_token"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gspo_loss_golden(name, dtype):
    old, new, mask = (torch.tensor(x, dtype=dtype) for x in (OLD, NEW, MASK))
    adv = broadcast_to_tokens(torch.tensor(ADV, dtype=dtype), mask)
    s = torch.exp(sequence_log_ratio(new, old, mask))
    torch.testing.assert_close(s, torch.tensor([1.033895, 1.161834], dtype=dtype), atol=1e-6, rtol=0)
    out = compute_policy_loss(
        name,
        log_prob=new,
        old_log_prob=old,
        advantages=adv,
        response_mask=mask,
        clip_ratio_low=3e-4,
        clip_ratio_high=4e-4,
    )
    assert out.loss.dim() == 0
    assert out.loss.item() == pytest.approx(0.438202, abs=1e-6)
    assert out.metrics["pg_clipfrac"] == pytest.approx(0.6, abs=1e-6)
    assert out.metrics["ppo_kl"] == pytest.approx(-0.08, abs=1e-6)
    # Row 0 (A > 0, s > 1 + hi) is clipped as a whole; row 1 (A < 0, s > 1) is not.
    assert out.metrics["seq_clipfrac"] == pytest.approx(0.5)
    assert out.metrics["pg_clipfrac_lower"] == 0.0
    assert out.metrics["seq_ratio_mean"] == pytest.approx((1.033895 + 1.161834) / 2, abs=1e-6)
    assert all(isinstance(v, float) for v in out.metrics.values())

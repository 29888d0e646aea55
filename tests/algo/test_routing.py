"""algo/routing.py: routing flips, expert load, the router's share of the log-prob gap; verl's own rollout
load-balance functions are the oracle for the load figures."""

from __future__ import annotations

import pytest
import torch

from gspo_cli.algo import routing


def _idx(rows) -> torch.Tensor:
    """[B, T, L, k] from nested lists."""
    return torch.tensor(rows, dtype=torch.long)


def test_flips_count_experts_not_order():
    # one sequence, two positions, one layer, top-2
    old = _idx([[[[0, 1]], [[2, 3]]]])
    same_set = _idx([[[[1, 0]], [[3, 2]]]])  # order inside the top-k does not matter
    one_flip = _idx([[[[0, 5]], [[2, 3]]]])  # position 0: expert 1 -> 5
    both = _idx([[[[4, 5]], [[2, 3]]]])
    mask = torch.ones(1, 2)
    assert routing.routing_flips(old, same_set, mask).flip_frac == 0.0
    flips = routing.routing_flips(old, one_flip, mask)
    assert (flips.flipped, flips.changed, flips.pairs, flips.k) == (1, 1, 2, 2)
    assert flips.flip_frac == pytest.approx(1 / 4) and flips.changed_frac == pytest.approx(1 / 2)
    assert flips.token_changed_frac == pytest.approx(1 / 2)  # one of the two positions changed
    # two layers: a position counts as changed when any of its layers changed
    two = routing.routing_flips(_idx([[[[0, 1], [2, 3]], [[0, 1], [2, 3]]]]), _idx([[[[0, 1], [2, 7]], [[0, 1], [2, 3]]]]),
                                mask)
    assert (two.changed_frac, two.token_changed_frac) == (pytest.approx(1 / 4), pytest.approx(1 / 2))
    assert routing.routing_flips(old, both, mask).flip_frac == pytest.approx(2 / 4)


def test_flips_ignore_masked_positions_and_add_up():
    old = _idx([[[[0, 1]], [[2, 3]]]])
    new = _idx([[[[0, 1]], [[6, 7]]]])
    assert routing.routing_flips(old, new, torch.tensor([[1.0, 0.0]])).flip_frac == 0.0
    assert routing.routing_flips(old, new, torch.tensor([[0.0, 1.0]])).flip_frac == 1.0
    total = routing.routing_flips(old, new, torch.tensor([[1.0, 0.0]])) + routing.routing_flips(
        old, new, torch.tensor([[0.0, 1.0]]))
    assert total.flip_frac == pytest.approx(0.5) == routing.routing_flips(old, new, torch.ones(1, 2)).flip_frac
    assert routing.FlipCounts().flip_frac is None  # nothing counted: no figure, not 0


def test_random_routing_flips_one_minus_k_over_e():
    g = torch.Generator().manual_seed(0)
    E, k, n = 8, 2, 20000

    def draw():
        return torch.rand(1, n, 1, E, generator=g).argsort(-1)[..., :k]

    measured = routing.routing_flips(draw(), draw(), torch.ones(1, n)).flip_frac
    assert measured == pytest.approx(routing.random_flip_frac(E, k), abs=0.01)  # 0.75
    assert routing.random_flip_frac(128, 8) == pytest.approx(0.9375)  # Qwen3-30B-A3B


def test_expert_load_and_balance_by_hand():
    # two layers, 4 experts, top-1; three counted positions
    idx = _idx([[[[0], [1]], [[0], [2]], [[0], [3]], [[3], [3]]]])
    mask = torch.tensor([[1, 1, 1, 0]])
    counts = routing.expert_load(idx, mask, 4)
    assert counts.tolist() == [[3, 0, 0, 0], [0, 1, 1, 1]]
    bal = routing.load_balance(counts)
    # layer 0: mean 0.75, population std sqrt(3 * 0.75^2 + 2.25^2) / 2 = 1.299 -> cv sqrt(3); max share x 4 - 1 = 3
    assert bal["cv"].tolist() == pytest.approx([3 ** 0.5, (3 * 0.25 ** 2 + 0.75 ** 2) ** 0.5 / 2 / 0.75])
    assert bal["max_vio"].tolist() == pytest.approx([3.0, 4 / 3 - 1])
    assert bal["min_vio"].tolist() == pytest.approx([-1.0, -1.0])
    even = routing.load_balance(torch.tensor([[5, 5, 5, 5]]))
    assert even["cv"].item() == 0.0 and even["max_vio"].item() == 0.0 and even["avg_vio"].item() == 0.0
    with pytest.raises(ValueError, match="outside"):
        routing.expert_load(_idx([[[[4]]]]), torch.ones(1, 1), 4)


def test_load_matches_verls_rollout_load_balance_functions():
    """Oracle: verl 0.9.1's own rollout MoE load counts and violation metrics, on random routes and masks."""
    from verl.trainer.ppo import metric_utils  # a hard import: a missing verl fails this check, never skips it
    g = torch.Generator().manual_seed(3)
    B, P, R, L, E, k = 6, 5, 7, 3, 8, 2
    routes = torch.rand(B, P + R, L, E, generator=g).argsort(-1)[..., :k]
    lengths = torch.tensor([7, 1, 0, 4, 6, 3])
    response_mask = (torch.arange(R).unsqueeze(0) < lengths.unsqueeze(1))
    theirs = metric_utils._compute_rollout_moe_load_counts(routes, response_mask, E)
    ours = routing.expert_load(routes[:, P:], routing.verl_load_mask(response_mask), E)
    assert torch.equal(ours, theirs)
    verl_metrics = metric_utils._compute_rollout_moe_load_balance_metrics_from_counts(theirs)
    bal = routing.load_balance(ours)
    for name in ("max_vio", "min_vio", "avg_vio"):
        assert bal[name].max().item() == pytest.approx(verl_metrics[f"rollout/moe/{name}/max"], abs=1e-6)
        assert bal[name].mean().item() == pytest.approx(verl_metrics[f"rollout/moe/{name}/avg"], abs=1e-6)
    # control: counting the last response token too (what verl's mask drops) gives other counts
    assert not torch.equal(routing.expert_load(routes[:, P:], response_mask, E), theirs)


def test_gap_sums_and_router_share():
    old = torch.zeros(2, 3)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    free = torch.tensor([[-0.4, 0.2, 9.0], [0.3, 9.0, 9.0]])  # padding values must not count
    replay = torch.tensor([[-0.1, 0.1, 9.0], [0.3, 9.0, 9.0]])
    gaps = routing.GapSums.of(free, replay, old, mask)
    assert gaps.token_gap == pytest.approx((0.4 + 0.2 + 0.3) / 3)
    assert gaps.token_gap_replay == pytest.approx((0.1 + 0.1 + 0.3) / 3)
    assert gaps.router_share == pytest.approx(1 - 0.5 / 0.9)
    # sequence level: |mean_t| per sequence: free (0.1, 0.3), replay (0.0, 0.3)
    assert gaps.seq_gap == pytest.approx(0.2) and gaps.seq_gap_replay == pytest.approx(0.15)
    assert gaps.router_seq_share == pytest.approx(1 - 0.3 / 0.4)
    same = routing.GapSums.of(old, old, old, mask)
    assert same.router_share is None and same.token_gap == 0.0  # no gap: no share
    assert (gaps + gaps).router_share == pytest.approx(gaps.router_share)


def test_scoring_positions_and_verl_mask():
    routes = torch.arange(6).view(1, 6, 1, 1)  # P = 3 prompt positions, then responses
    assert routing.shift_to_scoring_positions(routes, 3, 3).flatten().tolist() == [2, 3, 4]
    with pytest.raises(ValueError):
        routing.shift_to_scoring_positions(routes, 3, 5)
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 1, 0]])
    assert routing.verl_load_mask(mask).int().tolist() == [[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0],
                                                           [1, 0, 0, 0]]


def test_shape_errors():
    with pytest.raises(ValueError, match="L, k"):
        routing.routing_flips(torch.zeros(2, 3, 2, dtype=torch.long), torch.zeros(2, 3, 2, dtype=torch.long),
                              torch.ones(2, 3))
    with pytest.raises(ValueError, match="differ"):
        routing.overlap(torch.zeros(1, 1, 1, 2, dtype=torch.long), torch.zeros(1, 1, 1, 3, dtype=torch.long))

"""(b) Agreement with verl 0.9.1's own functions on hundreds of random cases (float64, 1e-6).

Cases cover random shapes, contiguous and scattered masks, empty rows, all-empty batches, tiny to huge
log-ratio changes (so both the PPO clip and verl's clamps at 10 / 20 are exercised), every loss_agg_mode and
verl's global-batch normalisation. Loss, gradient w.r.t. log_prob and the shared metrics must agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gspo_cli.algo.advantages import broadcast_to_tokens, grpo_outcome_advantages
from gspo_cli.algo.losses import POLICY_LOSSES, compute_policy_loss

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow

TOL = dict(atol=1e-6, rtol=1e-6)
MODES = ["seq-mean-token-mean", "token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm", "token-sum"]
CHUNKS = 4  # parametrised chunks of seeds, so a failure names a small seed range
PER_CHUNK = 75  # 300 random cases per loss


def random_mask(g: torch.Generator, b: int, t: int) -> torch.Tensor:
    kind = torch.randint(0, 8, (), generator=g).item()
    if kind == 0:  # all empty: verl divides 0 by 0 here
        return torch.zeros(b, t, dtype=torch.float64)
    if kind <= 2:  # scattered, with whatever empty rows fall out
        return (torch.rand(b, t, generator=g, dtype=torch.float64) < 0.6).double()
    # Right-padded responses, lengths 0..T (0 = an empty row), as the engine builds them.
    lengths = torch.randint(0, t + 1, (b,), generator=g)
    return (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).double()


def random_case(seed: int, *, per_sequence_adv: bool):
    g = torch.Generator().manual_seed(seed)
    b = int(torch.randint(1, 9, (), generator=g))
    t = int(torch.randint(1, 13, (), generator=g))
    mask = random_mask(g, b, t)
    old = -3 * torch.rand(b, t, generator=g, dtype=torch.float64)
    scale = [1e-4, 1e-2, 0.2, 1.0, 8.0, 40.0][int(torch.randint(0, 6, (), generator=g))]
    shift = scale * torch.randn(b, 1, generator=g, dtype=torch.float64)  # per-sequence drift
    new = old + shift + scale * torch.randn(b, t, generator=g, dtype=torch.float64)
    if per_sequence_adv:
        seq = torch.randn(b, generator=g, dtype=torch.float64)
        seq[torch.rand(b, generator=g) < 0.2] = 0.0
        adv = broadcast_to_tokens(seq, mask)
    else:
        adv = torch.randn(b, t, generator=g, dtype=torch.float64)
    lo = [3e-4, 0.2, 0.1, float(torch.rand((), generator=g)) * 0.5][int(torch.randint(0, 4, (), generator=g))]
    hi = [4e-4, 0.28, 0.2, float(torch.rand((), generator=g)) * 0.5][int(torch.randint(0, 4, (), generator=g))]
    mode = MODES[int(torch.randint(0, len(MODES), (), generator=g))]
    batch_info = {}
    if torch.rand((), generator=g) < 0.25:  # a micro-batch normalised by mini-batch counts
        batch_info = {
            "global_batch_size": float(torch.randint(b, 3 * b + 1, (), generator=g)),
            "batch_num_tokens": float(torch.randint(b * t, 3 * b * t + 1, (), generator=g)),
        }
    if mode == "seq-mean-token-sum-norm" and torch.rand((), generator=g) < 0.5:
        batch_info["loss_scale_factor"] = 4096
    return dict(old=old, new=new, adv=adv, mask=mask, lo=lo, hi=hi, mode=mode, batch_info=batch_info)


def ours(name, c):
    lp = c["new"].clone().requires_grad_(True)
    out = compute_policy_loss(
        name,
        log_prob=lp,
        old_log_prob=c["old"],
        advantages=c["adv"],
        response_mask=c["mask"],
        clip_ratio_low=c["lo"],
        clip_ratio_high=c["hi"],
        loss_agg_mode=c["mode"],
        **c["batch_info"],
    )
    (grad,) = torch.autograd.grad(out.loss, lp, allow_unused=False)
    return out, grad


def verls(verl_core, verl_actor_config, name, c):
    lp = c["new"].clone().requires_grad_(True)
    cfg = verl_actor_config(c["lo"], c["hi"], **c["batch_info"])
    fn = verl_core.get_policy_loss_fn(POLICY_LOSSES[name].verl)  # the entry's verl name: checked here
    loss, metrics = fn(
        old_log_prob=c["old"], log_prob=lp, advantages=c["adv"], response_mask=c["mask"],
        loss_agg_mode=c["mode"], config=cfg,
    )  # fmt: skip
    (grad,) = torch.autograd.grad(loss, lp)
    return loss, grad, metrics


def check_case(verl_core, verl_actor_config, name, c, seed):
    out, grad = ours(name, c)
    v_loss, v_grad, v_metrics = verls(verl_core, verl_actor_config, name, c)
    where = f"seed={seed} mode={c['mode']} shape={tuple(c['mask'].shape)} info={c['batch_info']}"
    if torch.isnan(v_loss):
        # verl's 0/0 when every row is empty and no global count is given; ours is a clean zero.
        assert c["mask"].sum() == 0 and not c["batch_info"].get("global_batch_size"), where
        assert out.loss.item() == 0.0 and torch.count_nonzero(grad) == 0, where
        return "nan"
    assert math.isclose(out.loss.item(), v_loss.item(), rel_tol=1e-6, abs_tol=1e-6), (where, out.loss, v_loss)
    torch.testing.assert_close(grad, v_grad, **TOL, msg=lambda m: f"{where}: {m}")
    for key in ("actor/pg_clipfrac", "actor/ppo_kl", "actor/pg_clipfrac_lower"):
        assert math.isclose(out.metrics[key.split("/")[1]], v_metrics[key], abs_tol=1e-6), (where, key)
    return "ok"


@pytest.mark.parametrize("chunk", range(CHUNKS))
@pytest.mark.parametrize(
    ("name", "per_sequence_adv"), [("gspo", True), ("gspo_token", False), ("gspo_token", True), ("vanilla", False)]
)
def test_policy_loss_matches_verl(verl_core, verl_actor_config, name, per_sequence_adv, chunk):
    outcomes = []
    for seed in range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK):
        c = random_case(seed + 1000 * per_sequence_adv, per_sequence_adv=per_sequence_adv)
        outcomes.append(check_case(verl_core, verl_actor_config, name, c, seed))
    assert outcomes.count("ok") >= PER_CHUNK // 2  # the NaN branch must not swallow the comparison


def test_random_cases_exercise_clipping_and_clamps(verl_core):
    """Guard against a generator that never reaches the interesting branches."""
    hits = {"clip": 0, "noclip": 0, "clamp10": 0, "empty_row": 0, "empty_batch": 0}
    for seed in range(CHUNKS * PER_CHUNK):
        c = random_case(seed, per_sequence_adv=False)
        out, _ = ours("gspo_token", c)
        hits["clip"] += out.metrics["pg_clipfrac"] > 0
        hits["noclip"] += out.metrics["pg_clipfrac"] < 1
        n = c["mask"].sum(-1)
        log_s = ((c["new"] - c["old"]) * c["mask"]).sum(-1) / n.clamp(min=1)
        hits["clamp10"] += bool((log_s > 10).any())
        hits["empty_row"] += bool((n == 0).any() and (n > 0).any())
        hits["empty_batch"] += bool((n == 0).all())
    assert all(v >= 10 for v in hits.values()), hits


def test_golden_values_in_verl(verl_core, verl_actor_config):
    """The issue's golden GSPO numbers come out of verl itself too."""
    old = torch.tensor([[-1.0, -0.7, -0.2], [-0.5, -1.2, 0.0]], dtype=torch.float64)
    new = torch.tensor([[-0.9, -0.8, -0.1], [-0.4, -1.0, 0.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]], dtype=torch.float64)
    adv = torch.tensor([[0.866] * 3, [-1.5] * 3], dtype=torch.float64) * mask
    loss, metrics = verl_core.compute_policy_loss_gspo(
        old, new, adv, mask, "seq-mean-token-mean", verl_actor_config(3e-4, 4e-4)
    )
    assert loss.item() == pytest.approx(0.438202, abs=1e-6)
    assert metrics["actor/pg_clipfrac"] == pytest.approx(0.6, abs=1e-6)
    assert metrics["actor/ppo_kl"] == pytest.approx(-0.08, abs=1e-6)


def random_scores(g: torch.Generator, b: int, dtype) -> torch.Tensor:
    kind = int(torch.randint(0, 4, (), generator=g))
    if kind == 0:  # binary rewards, the common RL case (many all-equal groups)
        return (torch.rand(b, generator=g) < 0.5).to(dtype)
    if kind == 1:  # {-1, 1}
        return torch.randint(0, 2, (b,), generator=g).to(dtype) * 2 - 1
    if kind == 2:  # small integers
        return torch.randint(-3, 4, (b,), generator=g).to(dtype)
    return torch.randn(b, generator=g, dtype=dtype) * 5


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_grpo_advantages_match_verl(verl_core, dtype):
    tol = dict(atol=1e-6, rtol=1e-6) if dtype == torch.float64 else dict(atol=1e-5, rtol=1e-5)
    for seed in range(300):
        g = torch.Generator().manual_seed(seed)
        b = int(torch.randint(1, 33, (), generator=g))
        t = int(torch.randint(1, 7, (), generator=g))
        n_groups = int(torch.randint(1, b + 1, (), generator=g))
        # Group ids as verl gets them: a numpy object array of uid strings, groups of any size (1 included).
        gid = torch.randint(0, n_groups, (b,), generator=g)
        uids = np.array([f"uid-{i}" for i in gid.tolist()], dtype=object)
        scores = random_scores(g, b, dtype)
        mask = random_mask(g, b, t).to(dtype)
        rewards = torch.zeros(b, t, dtype=dtype)
        last = (mask.sum(-1).long() - 1).clamp(min=0)  # reward on the last response token, as verl places it
        rewards[torch.arange(b), last] = scores
        norm = bool(seed % 3)
        eps = [1e-6, 1e-3][seed % 2]
        v_adv, v_ret = verl_core.compute_grpo_outcome_advantage(
            rewards, mask, uids, epsilon=eps, norm_adv_by_std_in_grpo=norm
        )
        adv = grpo_outcome_advantages(scores, list(uids), norm_by_std=norm, epsilon=eps)
        torch.testing.assert_close(
            broadcast_to_tokens(adv, mask), v_adv, **tol, msg=lambda m, seed=seed: f"seed={seed}: {m}"
        )
        # Same result with a tensor of integer ids.
        torch.testing.assert_close(grpo_outcome_advantages(scores, gid, norm_by_std=norm, epsilon=eps), adv)

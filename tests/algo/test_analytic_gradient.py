"""(c) Autograd through our GSPO loss equals the GSPO paper's analytic gradient (arXiv 2507.18071, eq. 10-11).

For J = (1/G) sum_i min(s_i A_i, clip(s_i) A_i), with s_i = (pi/pi_old)^(1/|y_i|):
    grad J = (1/G) sum_i [sequence i not clipped] * s_i * A_i / |y_i| * sum_t grad log pi(y_it),
and the loss is -J. A sequence is clipped when the clipped term is the active one:
A_i > 0 and s_i > 1 + hi, or A_i < 0 and s_i < 1 - lo. GSPO-token (eq. 16-17) has the same form with A_it
and a per-token clip decision. G counts non-empty sequences (verl's seq-mean over non-empty rows).
"""

from __future__ import annotations

import pytest
import torch

from gspo_cli.algo.advantages import broadcast_to_tokens
from gspo_cli.algo.losses import compute_policy_loss, sequence_log_ratio

LO, HI = 0.05, 0.08


def unclipped(s: torch.Tensor, adv: torch.Tensor) -> torch.Tensor:
    return ~(((adv > 0) & (s > 1 + HI)) | ((adv < 0) & (s < 1 - LO)))


def random_inputs(seed: int, b: int = 8, t: int = 9):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, t + 1, (b,), generator=g)
    lengths[0] = 0  # one empty row, which must get no gradient and not count in G
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).double()
    old = -2 * torch.rand(b, t, generator=g, dtype=torch.float64)
    # Per-sequence drift of +-0.2 puts some sequences outside [1 - LO, 1 + HI] and some inside.
    new = (
        old
        + 0.2 * torch.randn(b, 1, generator=g, dtype=torch.float64)
        + 0.02 * torch.randn(b, t, generator=g, dtype=torch.float64)
    )
    seq_adv = torch.randn(b, generator=g, dtype=torch.float64)
    return old, new, mask, seq_adv
@pytest.mark.slow


def test_gspo_grad_wrt_log_prob_is_paper_gradient():
    n_clipped = n_unclipped = 0
    for seed in range(30):
        old, new, mask, seq_adv = random_inputs(seed)
        lp = new.clone().requires_grad_(True)
        out = compute_policy_loss(
            "gspo", log_prob=lp, old_log_prob=old, advantages=broadcast_to_tokens(seq_adv, mask),
            response_mask=mask, clip_ratio_low=LO, clip_ratio_high=HI,
        )  # fmt: skip
        (grad,) = torch.autograd.grad(out.loss, lp)

        s = torch.exp(sequence_log_ratio(new, old, mask))
        n = mask.sum(-1)
        keep = unclipped(s, seq_adv) & (n > 0)
        coef = torch.where(keep, s * seq_adv / n.clamp(min=1), torch.zeros_like(s))
        expected = -(coef / (n > 0).sum()).unsqueeze(-1) * mask
        torch.testing.assert_close(grad, expected, atol=1e-9, rtol=1e-7, msg=lambda m, seed=seed: f"seed={seed}: {m}")
        # Clipped sequences get exactly zero gradient on every token.
        assert torch.count_nonzero(grad[~keep]) == 0
        n_clipped += int((~keep & (n > 0)).sum())
        n_unclipped += int(keep.sum())
    assert n_clipped >= 20 and n_unclipped >= 20, (n_clipped, n_unclipped)


@pytest.mark.parametrize("seed", range(10))
def test_gspo_token_grad_wrt_log_prob_is_paper_gradient(seed):
    old, new, mask, _ = random_inputs(seed)
    adv = torch.randn(new.shape, generator=torch.Generator().manual_seed(seed + 99), dtype=torch.float64)
    lp = new.clone().requires_grad_(True)
    out = compute_policy_loss(
        "gspo_token", log_prob=lp, old_log_prob=old, advantages=adv, response_mask=mask,
        clip_ratio_low=LO, clip_ratio_high=HI,
    )  # fmt: skip
    (grad,) = torch.autograd.grad(out.loss, lp)
    s = torch.exp(sequence_log_ratio(new, old, mask)).unsqueeze(-1).expand_as(adv)
    n = mask.sum(-1, keepdim=True)
    keep = unclipped(s, adv)
    expected = -torch.where(keep, s * adv / n.clamp(min=1), torch.zeros_like(adv)) * mask / (n > 0).sum()
    torch.testing.assert_close(grad, expected, atol=1e-9, rtol=1e-7)


class TinyPolicy(torch.nn.Module):
    """A bigram policy pi(y_t | y_{t-1}) = softmax(E[y_{t-1}] W): enough to have real parameters."""

    def __init__(self, vocab: int = 11, hidden: int = 6, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.emb = torch.nn.Parameter(torch.randn(vocab, hidden, generator=g, dtype=torch.float64))
        self.out = torch.nn.Parameter(torch.randn(hidden, vocab, generator=g, dtype=torch.float64) * 0.5)

    def token_log_probs(self, prev: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        logits = self.emb[prev] @ self.out
        return torch.log_softmax(logits, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_gspo_parameter_gradient_is_paper_gradient(seed):
    """Through a model: autograd of the loss == -(1/G) sum_i [unclipped] s_i A_i/|y_i| sum_t grad log pi."""
    g = torch.Generator().manual_seed(seed)
    b, t, vocab = 6, 7, 11
    policy = TinyPolicy(vocab=vocab, seed=seed)
    tokens = torch.randint(0, vocab, (b, t + 1), generator=g)
    prev, tok = tokens[:, :-1], tokens[:, 1:]
    lengths = torch.randint(2, t + 1, (b,), generator=g)
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).double()
    logp = policy.token_log_probs(prev, tok)
    # The old policy differs per sequence so that some sequences fall outside the clip range.
    old = (logp.detach() - 0.15 * torch.randn(b, 1, generator=g, dtype=torch.float64)).detach()
    seq_adv = torch.randn(b, generator=g, dtype=torch.float64)

    out = compute_policy_loss(
        "gspo", log_prob=logp, old_log_prob=old, advantages=broadcast_to_tokens(seq_adv, mask),
        response_mask=mask, clip_ratio_low=LO, clip_ratio_high=HI,
    )  # fmt: skip
    params = list(policy.parameters())
    autograd = torch.autograd.grad(out.loss, params, retain_graph=True)

    s = torch.exp(sequence_log_ratio(logp.detach(), old, mask))
    keep = unclipped(s, seq_adv)
    assert keep.any() and (~keep).any(), "want both clipped and unclipped sequences"
    expected = [torch.zeros_like(p) for p in params]
    for i in range(b):
        if not keep[i]:
            continue
        n_i = int(mask[i].sum())
        grad_sum_logp = torch.autograd.grad(logp[i, :n_i].sum(), params, retain_graph=True)
        for e, gl in zip(expected, grad_sum_logp, strict=True):
            e -= (s[i] * seq_adv[i] / n_i / b) * gl
    for a, e in zip(autograd, expected, strict=True):
        torch.testing.assert_close(a, e, atol=1e-10, rtol=1e-7)

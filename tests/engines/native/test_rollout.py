"""Rollout tensors: response mask semantics, and old log-probs equal the sampling policy's (left padding too)."""

from __future__ import annotations

import torch

from gspo_cli.engines.native.rollout import Sampling, generate, response_log_probs


def _load():
    from gspo_cli.models.loading import load_model, load_tokenizer, resolve_model_path

    path = resolve_model_path("builtin:tiny")
    return load_model(path, "float32"), load_tokenizer(path)


def test_mask_covers_the_response_up_to_and_including_eos(gspo_home):
    model, tok = _load()
    rows = [{"prompt": [{"role": "user", "content": f"{a}+{a}="}]} for a in range(6)]
    torch.manual_seed(0)
    batch = generate(model, tok, rows, Sampling(max_tokens=4), torch.device("cpu"), n=8)
    assert len(batch) == 48 and batch.row_index == [i for i in range(6) for _ in range(8)]
    eos = tok.eos_token_id
    saw_eos = saw_trunc = False
    for r, m, trunc in zip(batch.responses, batch.response_mask, batch.truncated, strict=True):
        n = int(m.sum())
        assert m[:n].eq(1).all() and m[n:].eq(0).all()  # a prefix
        if trunc:
            saw_trunc = True
            assert n == 4 and eos not in r.tolist()
        else:
            saw_eos = True
            assert r[n - 1] == eos and eos not in r[: n - 1].tolist()
            assert r[n:].eq(tok.pad_token_id).all()
    assert saw_eos and saw_trunc  # the random policy does both
    assert batch.attention_mask[:, batch.prompt_len:].float().equal(batch.response_mask)


def test_recomputed_log_probs_match_generate_scores_with_left_padding(gspo_home):
    model, tok = _load()
    # different prompt lengths -> left padding inside the batch
    rows = [{"prompt": [{"role": "user", "content": c}]} for c in ["1+1=", "12+7=", "3*4 ?= 1"]]
    temperature = 0.7
    torch.manual_seed(3)
    batch = generate(model, tok, rows, Sampling(temperature=temperature, max_tokens=4), torch.device("cpu"), n=3)
    assert batch.attention_mask[:, : batch.prompt_len].eq(0).any()  # really padded
    with torch.no_grad():
        logp, _ = response_log_probs(model, batch, temperature)
        # reference: the model's own step-by-step scores on each unpadded sequence, one at a time
        for i in range(len(batch)):
            keep = batch.attention_mask[i].bool()
            seq = batch.input_ids[i][keep].unsqueeze(0)
            n_resp = int(batch.response_mask[i].sum())
            logits = model(input_ids=seq).logits[0, -n_resp - 1 : -1] / temperature
            ref = torch.log_softmax(logits.float(), -1).gather(-1, seq[0, -n_resp:, None]).squeeze(-1)
            torch.testing.assert_close(logp[i, :n_resp], ref, atol=1e-4, rtol=1e-4)


def test_shared_prompt_paths_equal_the_plain_ones(gspo_home):
    """Prefill-once generation gives the same tokens; the shared-prompt forward the same log-probs and grads."""
    model, tok = _load()
    rows = [{"prompt": [{"role": "user", "content": c}]} for c in ["1+1=", "12+7=", "3*4 ?= 1", "5+5="]]
    sampling = Sampling(temperature=1.0, max_tokens=3)
    batches = []
    for share in (False, True):
        torch.manual_seed(11)
        batches.append(generate(model, tok, rows, sampling, torch.device("cpu"), share_prompts=share, n=6))
    plain, shared = batches
    assert torch.equal(plain.input_ids, shared.input_ids) and plain.texts == shared.texts

    model.train()

    def grads(share: bool, idx=None):
        model.zero_grad(set_to_none=True)
        logp, ent = response_log_probs(model, shared, 0.9, idx, with_entropy=True, share_prompts=share)
        m = shared.response_mask if idx is None else shared.response_mask[idx]
        ((logp * m).sum() + 0.1 * (ent * m).sum()).backward()
        return (logp * m).detach(), [p.grad.clone() for p in model.parameters()]

    for idx in (None, torch.arange(3, 17)):  # whole batch, and a slice cutting through groups
        a, ga = grads(False, idx)
        b, gb = grads(True, idx)
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
        scale = max(g.abs().max().item() for g in ga)
        assert max((x - y).abs().max().item() for x, y in zip(ga, gb, strict=True)) <= 1e-5 * max(scale, 1.0)


def test_prompt_longer_than_the_limit(gspo_home):
    import pytest

    from gspo_cli.errors import DataError

    model, tok = _load()
    rows = [{"prompt": [{"role": "user", "content": "1+2+3+4+5="}]}]
    with pytest.raises(DataError, match="max_prompt_length"):
        generate(model, tok, rows, Sampling(max_tokens=1), torch.device("cpu"), max_prompt_length=6, n=2)
    batch = generate(model, tok, rows, Sampling(max_tokens=1), torch.device("cpu"), max_prompt_length=6,
                     truncation="left", n=2)
    assert batch.prompt_len == 6
    assert tok.decode(batch.input_ids[0, :6]).endswith("<|im_start|>assistant\n")  # the end is kept

"""Rollout tensors: response mask semantics, and old log-probs equal the sampling policy's (left padding too)."""

from __future__ import annotations

import torch

from gspo_cli.engines.native.rollout import Sampling, generate, response_log_probs


def _load():
    from gspo_cli.engines.native.model_io import load_model, load_tokenizer, resolve_model_path

    path = resolve_model_path("builtin:tiny")
    return load_model(path, "float32"), load_tokenizer(path)


def test_mask_covers_the_response_up_to_and_including_eos(gspo_home):
    model, tok = _load()
    rows = [{"prompt": [{"role": "user", "content": f"{a}+{a}="}]} for a in range(6)]
    torch.manual_seed(0)
    batch = generate(model, tok, rows, Sampling(n=8, max_new_tokens=4), torch.device("cpu"))
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
    batch = generate(model, tok, rows, Sampling(n=3, temperature=temperature, max_new_tokens=4), torch.device("cpu"))
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

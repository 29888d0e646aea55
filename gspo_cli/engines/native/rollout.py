"""Rollout with HF `generate`: prompts (chat messages) -> sampled responses as padded tensors plus text.

Tensors follow verl's layout: `input_ids` = left-padded prompt ++ right-padded response, `responses` [B, R],
`response_mask` [B, R] = 1 on response tokens up to and including the first EOS. Log-probs are computed
from logits / temperature, as verl's actor does, so old and new log-probs agree with the sampling policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Sampling:
    n: int = 1
    do_sample: bool = True
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_new_tokens: int = 32


@dataclass
class RolloutBatch:
    input_ids: torch.Tensor  # [B, P + R]
    attention_mask: torch.Tensor  # [B, P + R]
    position_ids: torch.Tensor  # [B, P + R]
    responses: torch.Tensor  # [B, R]
    response_mask: torch.Tensor  # [B, R] float
    prompt_len: int
    texts: list[str]  # decoded responses
    row_index: list[int]  # which prompt row each response answers (the GRPO group id)
    truncated: torch.Tensor  # [B] bool: hit max_new_tokens without EOS

    def __len__(self) -> int:
        return self.responses.shape[0]


def eos_ids(tokenizer, model) -> list[int]:
    ids = {tokenizer.eos_token_id}
    gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if gen_eos is not None:
        ids.update(gen_eos if isinstance(gen_eos, list) else [gen_eos])
    return sorted(i for i in ids if i is not None)


def chat_prompts(tokenizer, rows: list[dict]) -> list[str]:
    return [tokenizer.apply_chat_template(list(r["prompt"]), add_generation_prompt=True, tokenize=False) for r in rows]


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    # Same as generate's positions for left padding: count real tokens only.
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


@torch.no_grad()
def generate(model, tokenizer, rows: list[dict], sampling: Sampling, device, max_prompt_length: int | None = None):
    """`sampling.n` responses per row; returns a RolloutBatch on `device`."""
    prompts = chat_prompts(tokenizer, rows)
    enc = tokenizer(prompts, return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False)
    if max_prompt_length is not None and enc["input_ids"].shape[1] > max_prompt_length:
        from gspo_cli.errors import DataError

        raise DataError(f"a prompt has {enc['input_ids'].shape[1]} tokens > data.max_prompt_length={max_prompt_length}",
                        "raise data.max_prompt_length or set data.truncation")
    ids = enc["input_ids"].to(device).repeat_interleave(sampling.n, 0)
    mask = enc["attention_mask"].to(device).repeat_interleave(sampling.n, 0)
    eos = eos_ids(tokenizer, model)
    greedy = not sampling.do_sample or sampling.temperature == 0
    kwargs = dict(max_new_tokens=sampling.max_new_tokens, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
    if greedy:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    else:
        kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p,
                      top_k=sampling.top_k if sampling.top_k > 0 else None)
    was_training = model.training
    model.eval()
    out = model.generate(input_ids=ids, attention_mask=mask, **kwargs)
    model.train(was_training)
    prompt_len = ids.shape[1]
    responses = out[:, prompt_len:]
    if responses.shape[1] == 0:  # max_new_tokens=0 or nothing generated: keep one padded column
        responses = torch.full((ids.shape[0], 1), tokenizer.pad_token_id, dtype=ids.dtype, device=device)
    is_eos = torch.isin(responses, torch.tensor(eos, device=device))
    # Tokens strictly after the first EOS are padding.
    after_eos = (is_eos.long().cumsum(-1) - is_eos.long()) > 0
    response_mask = (~after_eos).float()
    responses = responses.masked_fill(after_eos, tokenizer.pad_token_id)
    truncated = ~is_eos.any(-1)
    texts = tokenizer.batch_decode(responses, skip_special_tokens=True)
    attention_mask = torch.cat([mask, response_mask.long()], dim=-1)
    input_ids = torch.cat([ids, responses], dim=-1)
    row_index = [i for i in range(len(rows)) for _ in range(sampling.n)]
    return RolloutBatch(input_ids, attention_mask, position_ids_from_mask(attention_mask), responses,
                        response_mask, prompt_len, texts, row_index, truncated)


def response_log_probs(model, batch: RolloutBatch, temperature: float, idx=None, with_entropy: bool = False):
    """Log-probs [b, R] of the sampled response tokens under `model` (grad flows if enabled), and entropy."""
    sel = slice(None) if idx is None else idx
    input_ids, attn, pos = batch.input_ids[sel], batch.attention_mask[sel], batch.position_ids[sel]
    responses = batch.responses[sel]
    logits = model(input_ids=input_ids, attention_mask=attn, position_ids=pos, use_cache=False).logits
    logits = logits[:, batch.prompt_len - 1:-1].float()
    if temperature and temperature != 1.0:
        logits = logits / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, responses.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1) if with_entropy else None
    return logp, entropy

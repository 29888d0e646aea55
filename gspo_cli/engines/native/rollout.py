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
def generate(model, tokenizer, rows: list[dict], sampling: Sampling, device, max_prompt_length: int | None = None,
             share_prompts: bool = True, truncation: str = "error"):
    """`sampling.n` responses per row; returns a RolloutBatch on `device`."""
    prompts = chat_prompts(tokenizer, rows)
    enc = tokenizer(prompts, return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False)
    if max_prompt_length is not None and enc["input_ids"].shape[1] > max_prompt_length:
        if truncation == "left":  # keep each prompt's last tokens (left padding: the real tokens are at the end)
            enc = {k: v[:, -max_prompt_length:] for k, v in enc.items()}
        else:
            from gspo_cli.errors import DataError

            raise DataError(
                f"a prompt has {enc['input_ids'].shape[1]} tokens > data.max_prompt_length={max_prompt_length}",
                "raise data.max_prompt_length, or set data.truncation=left (the native engine truncates only left)")
    p_ids, p_mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
    ids = p_ids.repeat_interleave(sampling.n, 0)
    mask = p_mask.repeat_interleave(sampling.n, 0)
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
    if share_prompts and sampling.n > 1 and p_ids.shape[1] > 1:
        # Prefill each distinct prompt once (all but its last token) and fan the KV cache out to its n samples;
        # generate then starts from the last prompt token. Same tokens as the plain call (tested), n x less
        # prefill work.
        prefix = model(input_ids=p_ids[:, :-1], attention_mask=p_mask[:, :-1],
                       position_ids=position_ids_from_mask(p_mask)[:, :-1], use_cache=True)
        cache = prefix.past_key_values
        cache.batch_repeat_interleave(sampling.n)
        kwargs["past_key_values"] = cache
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


def _log_probs_from_logits(logits, responses, temperature: float, with_entropy: bool):
    logits = logits.float()
    if temperature and temperature != 1.0:
        logits = logits / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, responses.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1) if with_entropy else None
    return logp, entropy


def response_log_probs(model, batch: RolloutBatch, temperature: float, idx=None, with_entropy: bool = False,
                       share_prompts: bool = True):
    """Log-probs [b, R] of the sampled response tokens under `model` (grad flows if enabled), and entropy.

    With `share_prompts` (the default) each distinct prompt of the selection is run once and its KV cache is
    fanned out to its n responses, which then run on top of it: the same values and gradients as running every
    prompt+response sequence in full (tested), at a fraction of the compute when n responses share a prompt.
    """
    rows = torch.arange(len(batch), device=batch.responses.device) if idx is None else idx
    groups = torch.as_tensor(batch.row_index, device=rows.device)[rows]
    uniq, inverse = torch.unique(groups, return_inverse=True)
    grad_ckpt = getattr(model, "is_gradient_checkpointing", False)
    if not share_prompts or grad_ckpt or len(uniq) == len(rows):
        return _full_log_probs(model, batch, temperature, rows, with_entropy)
    P = batch.prompt_len
    responses = batch.responses[rows]
    R = responses.shape[1]
    # First row of each distinct prompt, as a row index into the batch.
    order = torch.arange(len(rows), device=rows.device)
    first = torch.full((len(uniq),), len(rows), device=rows.device).scatter_reduce(0, inverse, order, "amin")
    p_rows = rows[first]
    prefix = model(input_ids=batch.input_ids[p_rows, :P], attention_mask=batch.attention_mask[p_rows, :P],
                   position_ids=batch.position_ids[p_rows, :P], use_cache=True)
    first_logits = prefix.logits[:, -1][inverse].unsqueeze(1)  # predicts response token 0
    if R == 1:
        logits = first_logits
    else:
        cache = prefix.past_key_values
        cache.batch_select_indices(inverse)  # differentiable fan-out: prompt grads sum over its responses
        rest = model(input_ids=responses[:, :-1], attention_mask=batch.attention_mask[rows, :P + R - 1],
                     position_ids=batch.position_ids[rows, P:P + R - 1], past_key_values=cache, use_cache=True)
        logits = torch.cat([first_logits, rest.logits], dim=1)
    return _log_probs_from_logits(logits, responses, temperature, with_entropy)


def _full_log_probs(model, batch: RolloutBatch, temperature: float, rows, with_entropy: bool):
    out = model(input_ids=batch.input_ids[rows], attention_mask=batch.attention_mask[rows],
                position_ids=batch.position_ids[rows], use_cache=False)
    logits = out.logits[:, batch.prompt_len - 1:-1]
    return _log_probs_from_logits(logits, batch.responses[rows], temperature, with_entropy)

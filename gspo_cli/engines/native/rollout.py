"""Rollout with HF `generate`: prompts (chat messages) -> sampled responses as padded tensors plus text.

Tensors follow verl's layout: `input_ids` = left-padded prompt ++ right-padded response, `responses` [B, R],
`response_mask` [B, R] = 1 on response tokens up to and including the first EOS. Log-probs are computed
from logits / temperature, as verl's actor does, so old and new log-probs agree with the sampling policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast, overload

import torch

from gspo_cli.models.generate import Sampling, eos_ids, pad_id, sample

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


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
    truncated: torch.Tensor  # [B] bool: hit max_tokens without EOS
    # [B, R] log-probs of the sampled tokens as the sampler saw them (logits / temperature), None when greedy:
    # verl's rollout_log_probs, compared with the trainer's own old log-probs (training/rollout_probs_diff_*)
    log_probs: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.responses.shape[0]


def chat_prompts(tokenizer: PreTrainedTokenizerBase, rows: list[dict]) -> list[str]:
    # tokenize=False: each template renders to one string
    return [cast(str, tokenizer.apply_chat_template(list(r["prompt"]), add_generation_prompt=True, tokenize=False))
            for r in rows]


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    # Same as generate's positions for left padding: count real tokens only.
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


@torch.no_grad()
def generate(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, rows: list[dict], sampling: Sampling,
             device: torch.device, max_prompt_length: int | None = None, share_prompts: bool = True,
             truncation: str = "error", *, n: int = 1) -> RolloutBatch:
    """`n` responses per row; returns a RolloutBatch on `device`."""
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
    ids = p_ids.repeat_interleave(n, 0)
    mask = p_mask.repeat_interleave(n, 0)
    eos = eos_ids(tokenizer, model)
    extra = {}
    was_training = model.training
    model.eval()
    if share_prompts and n > 1 and p_ids.shape[1] > 1:
        # Prefill each distinct prompt once (all but its last token) and fan the KV cache out to its n samples;
        # generate then starts from the last prompt token. Same tokens as the plain call (tested), n x less
        # prefill work.
        prefix = model(input_ids=p_ids[:, :-1], attention_mask=p_mask[:, :-1],
                       position_ids=position_ids_from_mask(p_mask)[:, :-1], use_cache=True)
        cache = prefix.past_key_values
        cache.batch_repeat_interleave(n)
        extra["past_key_values"] = cache
    recorder = None
    if sampling.temperature > 0:
        from transformers import LogitsProcessorList

        recorder = SampledLogProbs(sampling.temperature)
        extra["logits_processor"] = LogitsProcessorList([recorder])
    out = sample(model, ids, mask, sampling, eos, pad_id(tokenizer, eos), **extra)
    model.train(was_training)
    texts = tokenizer.batch_decode(out.tokens, skip_special_tokens=True)
    attention_mask = torch.cat([mask, out.mask.long()], dim=-1)
    input_ids = torch.cat([ids, out.tokens], dim=-1)
    row_index = [i for i in range(len(rows)) for _ in range(n)]
    return RolloutBatch(input_ids, attention_mask, position_ids_from_mask(attention_mask), out.tokens,
                        out.mask, ids.shape[1], texts, row_index, out.truncated,
                        recorder.log_probs(out.tokens) if recorder is not None else None)


class SampledLogProbs:
    """A logits processor that records log p(token) of each sampled token while `generate` runs: it sees the
    logits of step t (before temperature/top-k/top-p, which generate applies after it) and, one call later,
    which token step t sampled. Memory O(batch): one distribution is held at a time."""

    def __init__(self, temperature: float) -> None:
        self.temperature = temperature
        self.previous: torch.Tensor | None = None
        self.values: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.previous is not None:
            self.values.append(self.previous.gather(-1, input_ids[:, -1:]).squeeze(-1))
        self.previous = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        return scores

    def log_probs(self, tokens: torch.Tensor) -> torch.Tensor | None:
        """[B, R] for the generated `tokens` (after the last call, the last token's own distribution)."""
        if self.previous is None or tokens.shape[1] != len(self.values) + 1:
            return None
        last = self.previous.gather(-1, tokens[:, -1:]).squeeze(-1)
        return torch.stack([*self.values, last], dim=1)


def _log_probs_from_logits(logits, responses, temperature: float, with_entropy: bool):
    logits = logits.float()
    if temperature and temperature != 1.0:
        logits = logits / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, responses.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1) if with_entropy else None
    return logp, entropy


@overload
def response_log_probs(model: PreTrainedModel, batch: RolloutBatch, temperature: float, idx: torch.Tensor | None = None,
                       with_entropy: Literal[False] = False, share_prompts: bool = True
                       ) -> tuple[torch.Tensor, None]: ...


@overload
def response_log_probs(model: PreTrainedModel, batch: RolloutBatch, temperature: float, idx: torch.Tensor | None = None,
                       *, with_entropy: Literal[True], share_prompts: bool = True
                       ) -> tuple[torch.Tensor, torch.Tensor]: ...


def response_log_probs(model: PreTrainedModel, batch: RolloutBatch, temperature: float, idx: torch.Tensor | None = None,
                       with_entropy: bool = False, share_prompts: bool = True
                       ) -> tuple[torch.Tensor, torch.Tensor | None]:
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

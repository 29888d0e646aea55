"""HF `generate` for the native rollout and eval's hf backend: one sampling type, one EOS rule, one cut at EOS.

- `Sampling`: temperature (0 = greedy), top_p, top_k (-1 = off), max_tokens, seed (eval seeds with it; the
  native trainer keeps its own RNG stream so that a resume replays the same samples).
- `eos_ids`: the tokens that end a response = the tokenizer's eos plus the model's generation_config eos (as
  vLLM stops on both); a model with neither is a ConfigError.
- `sample`: `model.generate` on left-padded prompts, then everything after a row's first EOS is padding. The
  response mask covers the response up to and including that EOS, as verl's does.

torch is imported inside the functions: eval's plain data types import `Sampling` from here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Sampling:
    """How to sample each response (also written into eval's results.json)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1  # -1 = disabled
    max_tokens: int = 1024
    seed: int = 0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0

    def to_dict(self) -> dict:
        return asdict(self)


def eos_ids(tokenizer, model) -> list[int]:
    """Token ids that end a response: the tokenizer's eos and the generation_config's (one id or a list)."""
    ids = {tokenizer.eos_token_id}
    gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if gen_eos is not None:
        ids.update(gen_eos if isinstance(gen_eos, list) else [gen_eos])
    found = sorted(i for i in ids if i is not None)
    if not found:
        from gspo_cli.errors import ConfigError

        raise ConfigError(f"{getattr(tokenizer, 'name_or_path', 'the model')}: no eos token in the tokenizer or "
                          "the generation_config", "set eos_token_id in the model's generation_config.json")
    return found


def pad_id(tokenizer, eos: list[int]) -> int:
    """The tokenizer's pad token, or the first eos for tokenizers without one."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(eos)


def generate_kwargs(sampling: Sampling, eos: list[int], pad: int) -> dict[str, Any]:
    """Arguments of `model.generate` for `sampling` (greedy clears the sampling knobs a generation_config sets)."""
    kwargs: dict[str, Any] = dict(max_new_tokens=sampling.max_tokens, eos_token_id=eos, pad_token_id=pad)
    if sampling.greedy:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    else:
        kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p,
                      top_k=sampling.top_k if sampling.top_k > 0 else None)
    return kwargs


@dataclass
class Responses:
    tokens: Any  # [B, R] long: the generated tokens, pad after each row's first EOS
    mask: Any  # [B, R] float: 1 up to and including the first EOS
    truncated: Any  # [B] bool: no EOS within max_tokens

    def lengths(self) -> list[int]:
        return [int(n) for n in self.mask.sum(-1).tolist()]


def sample(model, input_ids, attention_mask, sampling: Sampling, eos: list[int], pad: int, **extra) -> Responses:
    """Generate from left-padded prompts (no grad; the caller puts the model in eval mode) and cut each row at
    its first EOS. `extra` goes to `model.generate` (e.g. a prefilled `past_key_values`)."""
    import torch

    with torch.no_grad():
        out = model.generate(input_ids=input_ids, attention_mask=attention_mask,
                             **generate_kwargs(sampling, eos, pad), **extra)
    tokens = out[:, input_ids.shape[1]:]
    if tokens.shape[1] == 0:  # max_tokens=0 or nothing generated: keep one padded column
        tokens = torch.full((input_ids.shape[0], 1), pad, dtype=input_ids.dtype, device=input_ids.device)
    is_eos = torch.isin(tokens, torch.tensor(eos, device=tokens.device))
    # generate pads finished rows (often with eos itself): tokens strictly after the first EOS are padding.
    after_eos = (is_eos.long().cumsum(-1) - is_eos.long()) > 0
    return Responses(tokens.masked_fill(after_eos, pad), (~after_eos).float(), ~is_eos.any(-1))

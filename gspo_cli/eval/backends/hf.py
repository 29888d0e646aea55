"""transformers `generate` backend: batched, left-padded, on cpu / cuda / npu. The fallback where vLLM is absent."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from gspo_cli.eval.types import Generation
from gspo_cli.models.generate import Sampling, eos_ids, pad_id, sample


class HFBackend:
    name = "hf"

    def __init__(self, model_path: str, *, device: str = "cpu", dtype: str = "auto", batch_size: int = 16,
                 trust_remote_code: bool = False, **_ignored):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from gspo_cli.config import devices

        kind = devices.kind(device)
        if kind.torch_package:
            importlib.import_module(kind.torch_package)  # torch_npu registers the npu device with torch
        self.device = device
        if dtype == "auto":
            # bf16 generate on CPU is slow and gains nothing for eval-sized models (the device table's eval_dtype)
            dtype = kind.eval_dtype or "bfloat16"
        self.dtype = dtype
        self.batch_size = max(1, int(batch_size))
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=trust_remote_code)
        self.tokenizer.padding_side = "left"
        from gspo_cli.models.safe_load import refusing_pickles

        with refusing_pickles(model_path):  # transformers loads *.bin weights-only; a refusal is one line
            self.model = AutoModelForCausalLM.from_pretrained(
                model_path, dtype=getattr(torch, dtype), trust_remote_code=trust_remote_code
            ).to(device)
        self.model.eval()
        self.eos_ids = eos_ids(self.tokenizer, self.model)
        self.pad_id = pad_id(self.tokenizer, self.eos_ids)

    def generate(self, prompts: list[str], sampling: Sampling, n: int,
                 progress: Callable[[int, int], None] | None = None) -> list[list[Generation]]:
        import torch

        torch.manual_seed(sampling.seed)
        # every (prompt, sample) pair is one row; rows are ordered by prompt length (samples of a prompt stay
        # together) so a batch holds similar lengths and left padding wastes little
        lengths = [len(ids) for ids in self.tokenizer(prompts, add_special_tokens=False)["input_ids"]]
        order = sorted(range(len(prompts)), key=lambda p: lengths[p])
        rows = [(p, j) for p in order for j in range(n)]
        out: list[list[Generation | None]] = [[None] * n for _ in prompts]
        total = len(rows)
        done = 0
        for start in range(0, total, self.batch_size):
            batch = rows[start:start + self.batch_size]
            enc = self.tokenizer([prompts[p] for p, _ in batch], return_tensors="pt", padding=True,
                                 add_special_tokens=False).to(self.device)
            res = sample(self.model, enc["input_ids"], enc["attention_mask"], sampling, self.eos_ids, self.pad_id)
            # a response counts its tokens up to and including the first eos, as vLLM does
            for (p, j), row, length, cut in zip(batch, res.tokens.tolist(), res.lengths(), res.truncated.tolist(),
                                                strict=True):
                text = self.tokenizer.decode(row[:length], skip_special_tokens=True)
                out[p][j] = Generation(text=text, tokens=length, finish_reason="length" if cut else "stop",
                                       token_ids=tuple(row[:length]))
            done += len(batch)
            if progress is not None:
                progress(done, total)
        return [[g for g in per if g is not None] for per in out]

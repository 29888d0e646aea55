"""transformers `generate` backend: batched, left-padded, on cpu / cuda / npu. The fallback where vLLM is absent."""

from __future__ import annotations

from collections.abc import Callable

from gspo_cli.eval.types import Generation, Sampling


class HFBackend:
    name = "hf"

    def __init__(self, model_path: str, *, device: str = "cpu", dtype: str = "auto", batch_size: int = 16,
                 trust_remote_code: bool = False, **_ignored):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if device.startswith("npu"):
            import torch_npu  # noqa: F401  (registers the npu device with torch)
        self.device = device
        if dtype == "auto":
            # bf16 generate on CPU is slow and gains nothing for eval-sized models
            dtype = "float32" if device == "cpu" else "bfloat16"
        self.dtype = dtype
        self.batch_size = max(1, int(batch_size))
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=trust_remote_code)
        self.tokenizer.padding_side = "left"
        self.model = AutoModelForCausalLM.from_pretrained(
            model_path, dtype=getattr(torch, dtype), trust_remote_code=trust_remote_code
        ).to(device)
        self.model.eval()
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        if not self.eos_ids:
            from gspo_cli.errors import ConfigError

            raise ConfigError(f"{model_path}: no eos token in generation_config or tokenizer",
                              "set eos_token_id in the model's generation_config.json")
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(self.eos_ids)

    def _split(self, row: list[int]) -> tuple[list[int], str]:
        """Cut a generated row at its first eos (kept in the count, as vLLM does) -> (tokens, finish_reason)."""
        for i, tok in enumerate(row):
            if tok in self.eos_ids:
                return row[: i + 1], "stop"
        return row, "length"

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
        kwargs = {"max_new_tokens": sampling.max_tokens, "pad_token_id": self.pad_id,
                  "eos_token_id": sorted(self.eos_ids)}
        if sampling.greedy:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p,
                          top_k=sampling.top_k if sampling.top_k > 0 else None)
        done = 0
        for start in range(0, total, self.batch_size):
            batch = rows[start:start + self.batch_size]
            enc = self.tokenizer([prompts[p] for p, _ in batch], return_tensors="pt", padding=True,
                                 add_special_tokens=False).to(self.device)
            with torch.no_grad():
                gen = self.model.generate(**enc, **kwargs)
            new = gen[:, enc["input_ids"].shape[1]:].tolist()
            for (p, j), row in zip(batch, new, strict=True):
                # generate pads finished rows with pad (== eos for many models): cut at the first eos
                toks, reason = self._split(row)
                text = self.tokenizer.decode(toks, skip_special_tokens=True)
                out[p][j] = Generation(text=text, tokens=len(toks), finish_reason=reason)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        return [[g for g in per if g is not None] for per in out]

"""The `eval` section of a preset: `gspo eval`'s backend and device, and the settings of each benchmark
(`eval.benchmarks.<name>`, built-in benchmarks merged in from config/benchmarks.py). Part of the preset schema."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from gspo_cli.config.devices import ProcessDevice
from gspo_cli.config.section import PositiveInt, Probability, Section


class EvalBenchmark(Section):
    """Settings of `gspo eval BENCHMARK` (flags override them). Built-in benchmarks start from their own values
    (config/benchmarks.py: aime2024 avg@32 at top_p 0.7 and 8192 tokens; arith greedy), other names from these."""

    n: PositiveInt = 1
    k: list[PositiveInt] = Field(default_factory=lambda: [1])
    temperature: float = Field(default=1.0, ge=0)
    top_p: Probability = 1.0
    top_k: int = -1
    max_tokens: PositiveInt = 1024
    # None = the prompts as prepared.
    prompt_style: Literal["dapo", "boxed", "plain"] | None = None
    enable_thinking: bool = False
    # A prepared parquet to read instead of the prepare-data output of this benchmark.
    data: str | None = None
    # hf backend: sequences per generate call.
    batch_size: PositiveInt = 64
    seed: int = 0

    @model_validator(mode="after")
    def _k_le_n(self) -> EvalBenchmark:
        if self.top_k == 0 or self.top_k < -1:
            raise ValueError("top_k must be -1 (disabled) or a positive integer")
        bad = [k for k in self.k if k > self.n]
        if bad:
            raise ValueError(f"k={bad} larger than n={self.n}: pass@k needs k <= n samples per problem")
        self.__dict__["k"] = sorted(set(self.k))  # no re-validation loop through validate_assignment
        return self


class EvalSection(Section):
    backend: Literal["auto", "vllm", "hf"] = "auto"
    # Where eval generates: auto = npu > cuda > cpu as detected (independent of trainer.device, so a preset that
    # trains on cpu still evaluates on an accelerator when there is one); `gspo eval --device` overrides it.
    device: ProcessDevice = "auto"
    # Every built-in benchmark is here with its own defaults, under what the preset sets.
    benchmarks: dict[str, EvalBenchmark] = Field(default_factory=dict)
    # Benchmarks whose data `gspo prepare-data` builds; default: those the preset itself configures.
    prepare: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _builtin_benchmarks(cls, data: Any) -> Any:
        from gspo_cli.config.benchmarks import BUILTIN_BENCHMARKS, with_builtin_defaults

        if not isinstance(data, dict) or not isinstance(data.get("benchmarks", {}), dict):
            return data  # the field validators report the wrong type
        given = data.get("benchmarks") or {}
        out = dict(data)
        if "prepare" not in out:
            out["prepare"] = list(given)
        merged = {name: with_builtin_defaults(name, cfg) if isinstance(cfg, dict) else cfg
                  for name, cfg in given.items()}
        for name in BUILTIN_BENCHMARKS:
            merged.setdefault(name, with_builtin_defaults(name, {}))
        out["benchmarks"] = merged
        return out

    @model_validator(mode="after")
    def _prepare_known(self) -> EvalSection:
        unknown = [name for name in self.prepare if name not in self.benchmarks]
        if unknown:
            raise ValueError(f"prepare names {unknown}, which eval.benchmarks does not define")
        return self

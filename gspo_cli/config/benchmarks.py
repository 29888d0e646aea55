"""The built-in eval benchmarks: where each one's data comes from and its default settings.

This table is data the preset schema loads (`eval_schema.EvalSection`): every preset's `eval.benchmarks` holds each
built-in benchmark with these values under whatever the preset sets, so `gspo presets show --resolved` prints
exactly what `gspo eval BENCHMARK` uses. Pure data; a `Registry` (gspo_cli/registry.py) of entries, each carrying
its source, description and settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gspo_cli.registry import Registry


@dataclass(frozen=True)
class BuiltinBenchmark:
    """One built-in benchmark: everything gspo knows of it."""

    source: str  # the prepare-data source whose val split this benchmark reads
    description: str
    # Values over the schema's `EvalBenchmark` field defaults; keys are EvalBenchmark field names.
    settings: dict[str, Any] = field(default_factory=dict)


BUILTIN_BENCHMARKS: Registry[BuiltinBenchmark] = Registry("benchmark", key="eval benchmark")
BUILTIN_BENCHMARKS.add("aime2024", BuiltinBenchmark(
    "aime-2024", "AIME 2024, 30 integer-answer problems",
    # DAPO's protocol (avg@32, temperature 1.0, top_p 0.7); 30 problems make n=1 pure noise.
    {"n": 32, "k": [1, 4, 8, 16, 32], "temperature": 1.0, "top_p": 0.7, "top_k": -1, "max_tokens": 8192},
))
# ours: the same protocol as aime2024 (one number per problem, the Answer: prompt), so the three read side by side
BUILTIN_BENCHMARKS.add("aime2025", BuiltinBenchmark(
    "aime-2025", "AIME 2025, 30 integer-answer problems",
    {"n": 32, "k": [1, 4, 8, 16, 32], "temperature": 1.0, "top_p": 0.7, "top_k": -1, "max_tokens": 8192},
))
BUILTIN_BENCHMARKS.add("amc2023", BuiltinBenchmark(
    "amc-2023", "AMC 12 2023, 40 problems with numeric answers",
    {"n": 32, "k": [1, 4, 8, 16, 32], "temperature": 1.0, "top_p": 0.7, "top_k": -1, "max_tokens": 8192},
))
BUILTIN_BENCHMARKS.add("arith", BuiltinBenchmark(
    "arith", "synthetic integer arithmetic of the tiny demo (val split)",
    {"n": 1, "k": [1], "temperature": 0.0, "top_p": 1.0, "top_k": -1, "max_tokens": 8},
))


def source_of(benchmark: str) -> str:
    """The dataset source a benchmark reads (a name that is not built-in is taken as a source name)."""
    spec = BUILTIN_BENCHMARKS.get(benchmark)
    return spec.source if spec is not None else benchmark


def fitting_ks(ks: list[int], n: int) -> list[int]:
    """The k's of a default k list that fit a smaller n (pass@k needs k <= n); [1] if none does."""
    return [k for k in ks if k <= n] or [1]


def with_builtin_defaults(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """A benchmark's settings as the preset gives them, over the built-in defaults of that benchmark.

    A preset (or flag) that lowers `n` without naming `k` keeps the built-in k's that still fit, so
    `eval.benchmarks.aime2024.n: 4` means k = [1, 4], not an error about k=32.
    """
    spec = BUILTIN_BENCHMARKS.get(name)
    if spec is None:
        return dict(given)
    merged = {**spec.settings, **given}
    if isinstance(given.get("n"), int) and "k" not in given and "k" in spec.settings:
        merged["k"] = fitting_ks(list(spec.settings["k"]), given["n"])
    return merged

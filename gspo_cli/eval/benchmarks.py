"""Benchmark registry: where each benchmark's data comes from and its default sampling.

Settings are layered: registry defaults < the preset's `eval.benchmarks.<name>` < command-line flags. Any
verl-schema parquet works as a benchmark with `--data PATH` (its name is then free-form).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gspo_cli.errors import ConfigError, DataError


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    source: str  # prepare-data source whose val split this benchmark reads
    description: str
    defaults: dict[str, Any] = field(default_factory=dict)


REGISTRY: dict[str, BenchmarkSpec] = {
    "aime2024": BenchmarkSpec(
        "aime2024", "aime-2024", "AIME 2024, 30 integer-answer problems",
        # DAPO's protocol (avg@32, temperature 1.0, top_p 0.7); 30 problems make n=1 pure noise.
        dict(n=32, k=[1, 4, 8, 16, 32], temperature=1.0, top_p=0.7, top_k=-1, max_tokens=8192),
    ),
    "arith": BenchmarkSpec(
        "arith", "arith", "synthetic integer arithmetic of the tiny demo (val split)",
        dict(n=1, k=[1], temperature=0.0, top_p=1.0, top_k=-1, max_tokens=8),
    ),
}

SETTING_KEYS = ("n", "k", "temperature", "top_p", "top_k", "max_tokens", "prompt_style", "enable_thinking", "data")


@dataclass
class EvalSettings:
    benchmark: str
    n: int
    k: list[int]
    temperature: float
    top_p: float
    top_k: int
    max_tokens: int
    prompt_style: str | None  # None = the prompts as prepared
    enable_thinking: bool
    data: Path

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["data"] = str(self.data)
        return d


def resolve_settings(benchmark: str, preset=None, overrides: dict[str, Any] | None = None) -> EvalSettings:
    """Layer registry defaults, the preset's eval section and flag overrides (None values are ignored)."""
    from gspo_cli.layout import benchmark_file

    spec = REGISTRY.get(benchmark)
    merged: dict[str, Any] = {"n": 1, "k": None, "temperature": 1.0, "top_p": 1.0, "top_k": -1, "max_tokens": 1024,
                              "prompt_style": None, "enable_thinking": False, "data": None}
    if spec:
        merged.update(spec.defaults)
    section = preset.eval.benchmarks.get(benchmark) if preset is not None else None
    if section is not None:
        merged.update(section.model_dump(exclude_unset=True))
    k_from_flags = False
    for key, value in (overrides or {}).items():
        if key not in SETTING_KEYS:
            raise ValueError(f"unknown eval setting {key!r}")
        if value is not None:
            merged[key] = value
            k_from_flags = k_from_flags or key == "k"

    n = int(merged["n"])
    if n < 1:
        raise ConfigError(f"--n must be >= 1, got {n}")
    ks = sorted({int(k) for k in (merged["k"] or [1])})
    if any(k < 1 for k in ks):
        raise ConfigError(f"k values must be >= 1, got {ks}")
    too_big = [k for k in ks if k > n]
    if too_big:
        if k_from_flags:
            raise ConfigError(f"--k {too_big} larger than n={n}", "pass@k and maj@k need k <= n samples per problem")
        # a smaller --n than the preset's: keep the k's that still fit
        ks = [k for k in ks if k <= n] or [1]
    if merged["prompt_style"] not in (None, "dapo", "boxed", "plain"):
        raise ConfigError(f"unknown prompt style {merged['prompt_style']!r}", "use dapo, boxed or plain")
    if float(merged["temperature"]) < 0 or not 0 < float(merged["top_p"]) <= 1:
        raise ConfigError("temperature must be >= 0 and top_p in (0, 1]")
    if int(merged["top_k"]) == 0 or int(merged["top_k"]) < -1:
        raise ConfigError("top_k must be -1 (disabled) or positive")

    if merged["data"]:
        data = Path(merged["data"]).expanduser()
    elif spec is not None:
        data = benchmark_file(spec.name, preset)
    else:
        data = benchmark_file(benchmark, preset)
        if not data.is_file():
            raise ConfigError(
                f"unknown benchmark {benchmark!r}",
                f"known: {', '.join(REGISTRY)}; or pass --data PATH to a verl-schema parquet",
            )
    if not data.is_file():
        if merged["data"]:  # a file named by --data or the preset: prepare-data would not create it
            raise DataError(f"benchmark data not found: {data}", "check the path given by --data / eval.benchmarks")
        hint = f"run: gspo prepare-data --preset {preset.name}" if preset is not None else "run gspo prepare-data"
        raise DataError(f"benchmark data not found: {data}", f"{hint}, or pass --data PATH")
    return EvalSettings(benchmark=benchmark, n=n, k=ks, temperature=float(merged["temperature"]),
                        top_p=float(merged["top_p"]), top_k=int(merged["top_k"]), max_tokens=int(merged["max_tokens"]),
                        prompt_style=merged["prompt_style"], enable_thinking=bool(merged["enable_thinking"]),
                        data=data)


# ------------------------------------------------------------------ rows and prompts


@dataclass
class Problem:
    index: int  # row number in the file
    data_source: str
    messages: list[dict[str, str]]
    ground_truth: Any
    extra_info: dict[str, Any]


def _plain(value: Any) -> Any:
    """pyarrow gives dicts/lists already; strip numpy-ish leftovers so everything is JSON-able."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def load_problems(path: Path, limit: int | None = None) -> list[Problem]:
    """Rows of a verl-schema parquet: data_source, prompt (chat messages), reward_model.ground_truth, extra_info."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    missing = {"data_source", "prompt", "reward_model"} - set(table.column_names)
    if missing:
        raise DataError(f"{path} is not in verl's schema: missing column(s) {sorted(missing)}",
                        "prepare it with gspo prepare-data (columns data_source, prompt, reward_model, extra_info)")
    rows = table.to_pylist()
    if limit is not None:
        rows = rows[:limit]
    problems = []
    for i, row in enumerate(rows):
        prompt = row["prompt"]
        if isinstance(prompt, str):
            prompt = [{"role": "user", "content": prompt}]
        rm = row.get("reward_model") or {}
        if "ground_truth" not in rm:
            raise DataError(f"{path} row {i}: reward_model has no ground_truth")
        problems.append(Problem(index=i, data_source=str(row["data_source"]), messages=_plain(prompt),
                                ground_truth=_plain(rm["ground_truth"]), extra_info=_plain(row.get("extra_info") or {})))
    if not problems:
        raise DataError(f"{path} has no rows")
    return problems


def restyle(problem: Problem, style: str | None) -> list[dict[str, str]]:
    """The chat messages of `problem` with its user message rewritten in `style` (None = as prepared)."""
    if style is None:
        return problem.messages
    from gspo_cli.data import prompts

    messages = [dict(m) for m in problem.messages]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        raise DataError(f"row {problem.index} has no user message to restyle")
    last = users[-1]
    if problem.data_source == "arith" and "question" in problem.extra_info:
        from gspo_cli.data import arith

        messages[last]["content"] = arith.format_question(problem.extra_info["question"], style)
    else:
        # prepare-data keeps the raw problem in extra_info.problem; older files only have the styled prompt
        raw = problem.extra_info.get("problem") or prompts.strip_wrapper(messages[last]["content"])
        messages[last]["content"] = prompts.format_prompt(raw, style)
    return messages


def render_prompt(tokenizer, messages: list[dict[str, str]], enable_thinking: bool) -> str:
    """The model's chat template applied (generation prompt added). Qwen3 templates read `enable_thinking`;
    other templates ignore the extra variable. Without a chat template the contents are joined."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                             enable_thinking=enable_thinking)
    return "\n\n".join(m["content"] for m in messages)

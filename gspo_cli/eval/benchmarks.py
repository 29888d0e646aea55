"""A benchmark's problems and prompts: rows of a verl-schema parquet, restyled and rendered with the chat template.

Which benchmarks exist and their settings live in the schema (config/benchmarks.py, eval/settings.py). Any
verl-schema parquet works as a benchmark with `--data PATH` (its name is then free-form).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gspo_cli.errors import DataError

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

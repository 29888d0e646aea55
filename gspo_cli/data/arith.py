"""Synthetic integer arithmetic (`arith`): the task of the tiny native demo, generated offline and deterministically.

Pure code (no I/O): `make_arith_rows` returns rows in verl's dataset schema; the data source adapter writes them
to parquet. Problems are `a <op> b` with operands in [0, max_operand], drawn i.i.d. with a seed derived from
(seed, split), so train and val are independent draws from the same (small) problem space: with single digits
and `+` there are only 100 distinct problems, so val measures mastery of the distribution, not generalisation
to unseen problems.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Sequence

from gspo_cli.data.prompts import format_prompt

DATA_SOURCE = "arith"
ABILITY = "math"

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}


def format_question(question: str, prompt_style: str) -> str:
    """The user message for `question` ("3+4") in a prompt style: plain "3+4=", dapo or boxed instructions."""
    if prompt_style == "plain":
        return f"{question}="
    return format_prompt(question, prompt_style)  # the same instructions as every other source


def make_arith_rows(
    split: str,
    size: int,
    max_operand: int = 9,
    ops: Sequence[str] = ("+",),
    seed: int = 0,
    prompt_style: str = "plain",
) -> list[dict]:
    """`size` rows of `a <op> b` (operands 0..max_operand) in verl's row schema, deterministic in all arguments."""
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    if max_operand < 0:
        raise ValueError(f"max_operand must be >= 0, got {max_operand}")
    ops = list(ops)
    if not ops or any(op not in _OPS for op in ops):
        raise ValueError(f"ops must be a non-empty subset of {sorted(_OPS)}, got {ops}")
    format_question("0+0", prompt_style)  # validate the style before generating
    # A string seed is hashed with sha512 by `random`, so it is stable across processes and Python versions.
    rng = random.Random(f"arith:{seed}:{split}")
    rows = []
    for index in range(size):
        a = rng.randint(0, max_operand)
        b = rng.randint(0, max_operand)
        op = ops[rng.randrange(len(ops))]
        question = f"{a}{op}{b}"
        rows.append(
            {
                "data_source": DATA_SOURCE,
                "prompt": [{"role": "user", "content": format_question(question, prompt_style)}],
                "ability": ABILITY,
                "reward_model": {"style": "rule", "ground_truth": str(_OPS[op](a, b))},
                "extra_info": {"index": index, "split": split, "question": question},
            }
        )
    return rows

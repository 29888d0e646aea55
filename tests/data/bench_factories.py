"""Synthetic AIME-2025 and AMC-2023 raw files in the published schemas, with a few real records.

Real records (problem text and answer as published):
- AIME 2025: zhshgmail/AReaL evaluation/data/aime25/test.jsonl @ 000dc748 (ids 0, 3, 16); the same problems and
  answers are in yentinglin/aime_2025 (answer a string) and math-ai/aime25.
- AMC 2023: threegold116/Tool-Star-OCT evaluation/data/amc23/test.jsonl @ 1e6fddca (Qwen2.5-Math's copy of the 40
  problems): answers written "27.0", "-1.0", "3159.0"; math-ai/amc23 stores them as float64.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

AIME25_REAL = [
    ("0", "Find the sum of all integer bases $b>9$ for which $17_b$ is a divisor of $97_b.$", "70"),
    ("3", "Find the number of ordered pairs $(x,y)$, where both $x$ and $y$ are integers between $-100$ and $100$ "
          "inclusive, such that $12x^2-xy-6y^2=0$.", "117"),
    ("16", "Find the sum of all positive integers $n$ such that $n + 2$ divides the product $3(n + 3)(n^2 + 9)$.",
     "49"),
]
AMC23_REAL = [
    ("Cities $A$ and $B$ are $45$ miles apart. Alicia lives in $A$ and Beth lives in $B$. Alicia bikes towards $B$ "
     "at 18 miles per hour. Leaving at the same time, Beth bikes toward $A$ at 12 miles per hour. How many miles "
     "from City $A$ will they be when they meet?", 27.0),
    ("There is a unique sequence of integers $a_1, a_2, \\cdots a_{2023}$ such that\n\\[\\tan2023x = \\frac{a_1 "
     "\\tan x + a_3 \\tan^3 x + \\cdots + a_{2023} \\tan^{2023} x}{1 + a_2 \\tan^2 x + \\cdots + a_{2022} "
     "\\tan^{2022} x}\\]whenever $\\tan 2023x$ is defined. What is $a_{2023}?$", -1.0),
    ("What is the value of\n\\[2^3 - 1^3 + 4^3 - 3^3 + 6^3 - 5^3 + \\dots + 18^3 - 17^3?\\]", 3159.0),
]


def aime25_rows(count: int = 30) -> list[dict]:
    """yentinglin/aime_2025's columns: id, problem, answer (string)."""
    rows = [{"id": i, "problem": p, "answer": a} for i, p, a in AIME25_REAL]
    for n in range(len(rows), count):
        rows.append({"id": str(n), "problem": f"AIME 2025 problem {n}: find the remainder when {n + 7}^{n + 3} is "
                                              "divided by 1000.", "answer": str(pow(n + 7, n + 3, 1000))})
    return rows


def write_aime25(path: Path, rows: list[dict] | None = None) -> Path:
    schema = pa.schema([("id", pa.string()), ("problem", pa.string()), ("answer", pa.string())])
    pq.write_table(pa.Table.from_pylist(rows if rows is not None else aime25_rows(), schema=schema), path)
    return path


def amc23_rows(count: int = 40, extra: list[tuple[str, float]] | None = None) -> list[dict]:
    """math-ai/amc23's columns: id (int64), question, answer (float64), url."""
    pairs = list(AMC23_REAL) + list(extra or [])
    pairs += [(f"AMC 12 2023 problem {n}: how many positive divisors does {n * 12} have?",
               float(sum(1 for d in range(1, n * 12 + 1) if n * 12 % d == 0))) for n in range(len(pairs), count)]
    return [{"id": i, "question": q, "answer": a,
             "url": f"https://artofproblemsolving.com/wiki/index.php/2023_AMC_12A_Problems/Problem_{i + 1}"}
            for i, (q, a) in enumerate(pairs[:count])]


def write_amc23(path: Path, rows: list[dict] | None = None) -> Path:
    schema = pa.schema([("id", pa.int64()), ("question", pa.string()), ("answer", pa.float64()), ("url", pa.string())])
    pq.write_table(pa.Table.from_pylist(rows if rows is not None else amc23_rows(), schema=schema), path)
    return path

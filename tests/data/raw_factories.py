"""Synthetic raw datasets in each source's real published schema, written by the tests themselves."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gspo_cli.data.prompts import format_prompt


def aime_problems() -> list[tuple[str, str, str]]:
    """30 (id, problem, answer) like AIME 2024 I and II: integer answers 0..999, some with leading zeros."""
    rng = random.Random(2024)
    out = []
    for part in ("I", "II"):
        for n in range(1, 16):
            answer = rng.randint(0, 999)
            problem = (
                f"AIME {part} problem {n}: let $N$ be the number of ordered pairs $(a,b)$ of integers with "
                f"$1 \\le a,b \\le {rng.randint(10, 99)}$ such that $a^2+b^2$ is divisible by {n + 2}. Find $N$."
            )
            out.append((f"2024-{part}-{n}", problem, f"{answer:03d}" if n % 5 == 0 else str(answer)))
    return out


def write_aime_verl(path: Path, repeats: int = 32) -> Path:
    """BytedTsinghua-SIA/AIME-2024: verl schema, the DAPO wrapper, each problem repeated 32 times (960 rows)."""
    rows = []
    for rep in range(repeats):
        for i, (_, problem, answer) in enumerate(aime_problems()):
            rows.append({
                "data_source": "math_dapo",
                "prompt": [{"content": format_prompt(problem, "dapo"), "role": "user"}],
                "ability": "MATH",
                "reward_model": {"ground_truth": str(int(answer)), "style": "rule-lighteval/MATH_v2"},
                "extra_info": {"index": f"{rep}-{i}", "raw_problem": problem, "split": "default"},
            })
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_aime_maxwell(path: Path) -> Path:
    """Maxwell-Jia/AIME_2024: ID, Problem, Solution, Answer (int64)."""
    table = pa.table({
        "ID": [i for i, _, _ in aime_problems()],
        "Problem": [p for _, p, _ in aime_problems()],
        "Solution": [f"Some solution text {i}." for i, _, _ in aime_problems()],
        "Answer": pa.array([int(a) for _, _, a in aime_problems()], pa.int64()),
    })
    pq.write_table(table, path)
    return path


def write_aime_h4(path: Path) -> Path:
    """HuggingFaceH4/aime_2024: id, problem, solution, answer (string, zero-padded in places), url, year."""
    probs = aime_problems()
    table = pa.table({
        "id": list(range(60, 90)),
        "problem": [p + "\n" for _, p, _ in probs],  # trailing whitespace differs from the other shapes
        "solution": ["..."] * 30,
        "answer": [a for _, _, a in probs],
        "url": [f"https://artofproblemsolving.com/wiki/index.php/{i}" for i, _, _ in probs],
        "year": ["2024"] * 30,
    })
    pq.write_table(table, path)
    return path


def dapo_row(problem: str, answer, index: str, *, wrap: bool = True) -> dict:
    return {
        "data_source": "math_dapo",
        "prompt": [{"content": format_prompt(problem, "dapo") if wrap else problem, "role": "user"}],
        "ability": "MATH",
        "reward_model": {"ground_truth": answer, "style": "rule-lighteval/MATH_v2"},
        "extra_info": {"index": index},
    }


def write_dapo(path: Path, rows: list[dict], row_group_size: int | None = None) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=row_group_size)
    return path


def dapo_fixture_rows() -> list[dict]:
    """A small DAPO-shaped file with every case the cleaner must count.

    - 10 clean problems, 0..9, problem i repeated i+1 times (55 rows, 45 duplicates)
    - problem "C": answers 7 and 8 (a conflict; 3 rows)
    - problem "Z": Chinese text (2 rows)
    - 2 rows whose ground truth is not an integer, 1 with an empty ground truth, 1 with an empty problem
    """
    rows = []
    n = 0
    for i in range(10):
        for _ in range(i + 1):
            rows.append(dapo_row(f"Clean problem number {i}: compute {i} + {i}.", str(2 * i), f"u{n}"))
            n += 1
    rows.append(dapo_row("Conflict problem C.", "7", "c1"))
    rows.append(dapo_row("Conflict problem C.", "8", "c2"))
    rows.append(dapo_row("Conflict problem C.", "7", "c3"))
    rows.append(dapo_row("求 1 加 1 的值。", "2", "z1"))
    rows.append(dapo_row("求 1 加 1 的值。", "2", "z2"))
    rows.append(dapo_row("Bad answer problem A.", "\\frac{1}{2}", "b1"))
    rows.append(dapo_row("Bad answer problem B.", "x+1", "b2"))
    rows.append(dapo_row("Empty answer problem.", "", "b3"))
    rows.append(dapo_row("", "5", "b4"))
    # The same clean problem 3 published with extra whitespace and without the wrapper: still one problem.
    rows.append(dapo_row("Clean problem number 3:  compute 3 + 3. ", "6", "w1", wrap=False))
    random.Random(0).shuffle(rows)
    return rows

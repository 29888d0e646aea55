"""Benchmark `gspo prepare-data` against a pandas read_parquet + drop_duplicates baseline on DAPO-Math-17k scale.

    .venv/bin/python benchmarks/prepare_data.py [--rows 1791700] [--unique 17398] [--workdir /tmp]

Generates a parquet shaped like BytedTsinghua-SIA/DAPO-Math-17k (verl schema, the DAPO instruction wrapper,
17,398 distinct problems with realistic lengths, each repeated ~103 times, shuffled; a few problems with
conflicting answers and a few non-integer ground truths, as a real scrape has), then runs each contender in its
own subprocess (so peak RSS is that process's alone, read from wait4's ru_maxrss), checks both wrote the same
rows, and prints a table. Everything lives in a temp folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFLICTING = 25  # problems that also appear with a second answer
BAD_TRUTHS = 40  # rows whose ground truth is not an integer

# --------------------------------------------------------------------------- data


def generate(path: Path, rows: int, unique: int, seed: int = 0) -> dict:
    """Write the DAPO-shaped parquet; returns what is in it."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gspo_cli.data.prompts import format_prompt

    rng = np.random.default_rng(seed)
    words = [
        "triangle", "integer", "positive", "sum", "let", "find", "the", "number", "of", "real", "values", "such",
        "that", "$x$", "$y$", "$n$", "is", "a", "prime", "circle", "radius", "$\\frac{m}{n}$", "where", "and",
        "are", "relatively", "prime", "integers", "compute", "$m+n$", "polynomial", "roots", "$ABC$", "with",
        "$AB=13$", "$BC=14$", "points", "on", "segment", "probability", "digits", "remainder", "when", "divided",
        "by", "$1000$", "sequence", "$a_n$", "satisfies", "for", "all", "$\\sqrt{2}$", "area", "expressed", "as",
    ]
    # DAPO problems: median ~250 characters, long tail to a few thousand (lognormal in words).
    lengths = np.clip(rng.lognormal(mean=3.7, sigma=0.6, size=unique).astype(int), 8, 600)
    vocab = np.array(words)
    problems = []
    for i, n in enumerate(lengths):
        body = " ".join(vocab[rng.integers(0, len(vocab), size=n)])
        problems.append(f"Problem {i}: {body}?")
    answers = [str(int(a)) for a in rng.integers(0, 100_000, size=unique)]

    # Row -> problem: every problem ~rows/unique times, shuffled like a concatenation of resampled epochs.
    reps = np.full(unique, rows // unique)
    reps[: rows - reps.sum()] += 1
    index = np.repeat(np.arange(unique), reps)
    rng.shuffle(index)

    prompt = pa.array([[{"content": format_prompt(p, "dapo"), "role": "user"}] for p in problems])
    uniq = pa.table({
        "data_source": pa.array(["math_dapo"] * unique),
        "prompt": prompt,
        "ability": pa.array(["MATH"] * unique),
        "reward_model": pa.array([{"ground_truth": a, "style": "rule-lighteval/MATH_v2"} for a in answers]),
    })
    table = uniq.take(pa.array(index))
    gts = np.array(answers, dtype=object)[index]
    # A second answer for some problems (on one of their copies) and non-integer truths on a few rows.
    conflict_rows = [int(np.flatnonzero(index == p)[-1]) for p in range(CONFLICTING)]
    for r in conflict_rows:
        gts[r] = str(int(gts[r]) + 1)
    bad_rows = rng.choice(rows, size=BAD_TRUTHS, replace=False)
    for r in bad_rows:
        gts[r] = "\\frac{1}{2}"
    table = table.set_column(
        3, "reward_model",
        pa.StructArray.from_arrays([pa.array(list(gts)), pa.array(["rule-lighteval/MATH_v2"] * rows)],
                                   names=["ground_truth", "style"]),
    )
    uuid_like = pa.array([f"{i:08x}-5f3c-4a1e-9d2b-{i * 7919 % 10**12:012x}" for i in range(rows)])
    table = table.append_column("extra_info", pa.StructArray.from_arrays([uuid_like], names=["index"]))
    pq.write_table(table, path)  # pyarrow defaults, as `df.to_parquet` would write it
    mean_chars = sum(len(format_prompt(p, "dapo")) * int(k) for p, k in zip(problems, reps, strict=True)) / rows
    return {"rows": rows, "unique": unique, "bytes": path.stat().st_size, "mean_prompt_chars": round(mean_chars),
            "row_groups": pq.ParquetFile(path).metadata.num_row_groups}


# --------------------------------------------------------------------------- contenders


def pandas_baseline(src: str, dest: str) -> None:
    """What one would write by hand: read everything, derive the problem, drop conflicts, drop_duplicates."""
    import pandas as pd

    from gspo_cli.data.answers import integer_answer
    from gspo_cli.data.prompts import chat, strip_wrapper

    df = pd.read_parquet(src)
    df["problem"] = df["prompt"].map(lambda msgs: strip_wrapper(msgs[-1]["content"]))
    df["answer"] = df["reward_model"].map(lambda rm: integer_answer(rm["ground_truth"]))
    df = df[df["answer"].notna() & (df["problem"] != "")]
    n_answers = df.groupby("problem")["answer"].nunique()
    df = df[df["problem"].map(n_answers) == 1]
    df = df.drop_duplicates(subset="problem", keep="first").reset_index(drop=True)
    out = pd.DataFrame({
        "data_source": df["data_source"],
        "prompt": df["problem"].map(lambda p: chat(p, "dapo")),
        "ability": df["ability"],
        "reward_model": df["answer"].map(lambda a: {"ground_truth": a, "style": "rule"}),
        "extra_info": [
            {"index": i, "split": "train", "problem": p, "source_index": str(e["index"])}
            for i, (p, e) in enumerate(zip(df["problem"], df["extra_info"], strict=True))
        ],
    })
    out.to_parquet(dest)


def run_measured(cmd: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (bytes) and stderr of one subprocess.

    Linux carries a process's pre-exec high-water RSS into ru_maxrss, and a child starts as a copy of its parent,
    so the driver that spawns measured children imports nothing heavy: generation and comparison run in their
    own children too.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{stdout[-2000:]}\n{stderr[-3000:]}")
    return wall, usage.ru_maxrss * 1024, stderr


def rows_of(path: Path) -> list[tuple[str, str]]:
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["extra_info", "reward_model"])
    problems = [e["problem"] for e in t.column("extra_info").to_pylist()]
    answers = [r["ground_truth"] for r in t.column("reward_model").to_pylist()]
    return list(zip(problems, answers, strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_791_700)
    ap.add_argument("--unique", type=int, default=17_398)
    ap.add_argument("--workdir", default=tempfile.gettempdir())
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # work done in a child process so this driver stays small (see run_measured)
        what, *rest = args.child
        if what == "baseline":
            pandas_baseline(*rest)
        elif what == "generate":
            print(json.dumps(generate(Path(rest[0]), int(rest[1]), int(rest[2]))))
        elif what == "compare":
            a, b = rows_of(Path(rest[0])), rows_of(Path(rest[1]))
            print(json.dumps({"same": a == b, "rows": [len(a), len(b)]}))
        return

    work = Path(tempfile.mkdtemp(prefix="gspo-bench-prepare-", dir=args.workdir))
    try:
        raw = work / "dapo-math-17k.parquet"
        t0 = time.perf_counter()
        info = json.loads(subprocess.run(
            [sys.executable, __file__, "--child", "generate", str(raw), str(args.rows), str(args.unique)],
            check=True, capture_output=True, text=True).stdout)
        gen_s = time.perf_counter() - t0
        print(f"generated {raw.name}: {info['rows']:,} rows, {info['unique']:,} problems, "
              f"{info['bytes'] / 2**20:.0f} MiB, {info['row_groups']} row groups in {gen_s:.1f}s", file=sys.stderr)

        env = {**os.environ, "GSPO_HOME": str(work / "home"), "PYTHONPATH": str(ROOT)}
        ours_cmd = [sys.executable, "-m", "gspo_cli", "prepare-data", "--preset", "qwen3-32b", "--local",
                    "--dataset", "dapo-math-17k", "--input", f"dapo-math-17k={raw}", "--out", str(work / "ours"),
                    "--json"]
        ours_s, ours_rss, _ = run_measured(ours_cmd, env)
        ours_file = work / "ours" / "dapo-math-17k" / "train.parquet"
        manifest = json.loads((work / "ours" / "dapo-math-17k" / "manifest.json").read_text())
        rerun_s, rerun_rss, rerun_err = run_measured(ours_cmd, env)
        assert "unchanged" in rerun_err, rerun_err

        results = [("gspo prepare-data (pyarrow streaming)", ours_s, ours_rss, manifest["rows_out"])]
        if not args.skip_baseline:
            base_file = work / "baseline.parquet"
            base_s, base_rss, _ = run_measured(
                [sys.executable, __file__, "--child", "baseline", str(raw), str(base_file)], env
            )
            same = json.loads(subprocess.run(
                [sys.executable, __file__, "--child", "compare", str(ours_file), str(base_file)],
                check=True, capture_output=True, text=True).stdout)
            if not same["same"]:
                raise SystemExit(f"outputs differ: ours {same['rows'][0]} rows, baseline {same['rows'][1]} rows")
            results.append(("pandas read_parquet + drop_duplicates", base_s, base_rss, same["rows"][1]))
        results.append(("gspo prepare-data rerun (no-op)", rerun_s, rerun_rss, manifest["rows_out"]))

        print(f"\ninput: {info['rows']:,} rows, {info['unique']:,} unique problems, mean prompt "
              f"{info['mean_prompt_chars']} chars, {info['bytes'] / 2**20:.0f} MiB parquet ({info['row_groups']} row "
              f"groups); cpus: {os.cpu_count()}, load average at the end {os.getloadavg()[0]:.1f}")
        print(f"manifest: rows_out {manifest['rows_out']}, duplicates_removed {manifest['duplicates_removed']}, "
              f"conflicts {manifest['conflicts']['problems']}, rejected {manifest['rejected']['rows']}")
        print("\n| contender | wall s | peak RSS MiB | rows out |")
        print("|---|---:|---:|---:|")
        for name, s, rss, n in results:
            print(f"| {name} | {s:.1f} | {rss / 2**20:.0f} | {n:,} |")
        if not args.skip_baseline:
            print(f"\nspeed-up {base_s / ours_s:.1f}x, memory {ours_rss / base_rss:.2f} of the baseline "
                  f"(targets: ours < 30 s, < 1024 MiB; >= 2x faster; <= 0.5 of the memory); outputs identical")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""`gspo score` on a 10,000-row rollout file: wall time, and its comparison table against verl's checker.

    .venv/bin/python benchmarks/score_file.py [--rows 10000] [--chars 8000] [--keep FILE] [--math-verify-rows 0]

The file mixes the shapes training produces (benchmarks/verifier.py's generator: `Answer:` lines, Qwen3
thinking + boxed summary, prose, truncated thinking, truncated; ~2k tokens each, half right) with every 20th
row taken from the labelled suites (corpus, peer suite, adversarial suite), so the disagreement table has the
hard cases in it. The real command runs in a subprocess (`python -m gspo_cli score ... --json`), timed from
outside: start-up, imports (verl pulls in torch), reading and scoring all count.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
SUITES = [ROOT / "tests" / "rewards" / "data" / f for f in
          ("verifier_corpus.jsonl", "peer_suite_cases.jsonl", "adversarial_suite.jsonl")]


def build(path: Path, rows: int, chars: int) -> dict:
    """Write the mixed file; returns what went into it."""
    from verifier import responses

    labelled = [json.loads(x) for f in SUITES for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    gen = responses(rows, chars, seed=7)
    n_suite = 0
    with path.open("w", encoding="utf-8") as f:
        for i in range(rows):
            r, g = next(gen)
            row = {"response": r, "ground_truth": g, "data_source": "math_dapo"}
            if i % 20 == 19:
                s = labelled[n_suite % len(labelled)]
                n_suite += 1
                row = {"response": s["response"], "ground_truth": s["ground_truth"],
                       "data_source": s.get("data_source") or "math_dapo"}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"rows": rows, "from_suites": n_suite, "bytes": path.stat().st_size}


def run(args: list[str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "gspo_cli", "score", *args, "--json"], capture_output=True, text=True,
                       cwd=ROOT)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"gspo score failed ({p.returncode}): {p.stderr[-2000:]}")
    return wall, json.loads(p.stdout)


def table(rep: dict) -> str:
    c = rep["compare"]
    ours, peer = rep["verifier"], c["peer"]
    return "\n".join([
        f"| | {peer} right | {peer} wrong | total |", "|---|---:|---:|---:|",
        f"| {ours} right | {c['both_right']:,} | {c['only_ours']:,} | {rep['correct']:,} |",
        f"| {ours} wrong | {c['only_peer']:,} | {c['both_wrong']:,} | {rep['rows'] - rep['correct']:,} |",
        f"| total | {c['peer_correct']:,} | {rep['rows'] - c['peer_correct']:,} | {rep['rows']:,} |",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--chars", type=int, default=8_000, help="characters per generated response (~2k tokens)")
    ap.add_argument("--keep", help="write the file here and keep it (default: a temporary file)")
    ap.add_argument("--math-verify-rows", type=int, default=0, help="also compare with math-verify on N rows")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(a.keep) if a.keep else Path(tmp) / "rollouts.jsonl"
        info = build(path, a.rows, a.chars)
        print(f"file: {info['rows']:,} rows ({info['from_suites']} from the labelled suites), "
              f"{info['bytes'] / 1e6:.1f} MB")
        wall, rep = run([str(path), "--preset", "qwen3-8b-2x8"])
        print(f"\n## gspo score FILE --preset qwen3-8b-2x8: {wall:.1f} s wall ({rep['rows'] / wall:,.0f} rows/s)")
        print(f"accuracy {100 * rep['accuracy']:.2f}%, extraction rate {100 * rep['extraction_rate']:.2f}%")
        print("how: " + ", ".join(f"{k} {v:,}" for k, v in rep["how"].items()))
        wall_c, rep_c = run([str(path), "--preset", "qwen3-8b-2x8", "--compare", "verl", "--show", "10"])
        print(f"\n## gspo score FILE --preset qwen3-8b-2x8 --compare verl: {wall_c:.1f} s wall")
        print(table(rep_c))
        print(f"\ndisagreements: {rep_c['compare']['disagree']:,}; first ones:")
        for e in rep_c["compare"]["examples"]:
            print(f"- line {e['line']}: truth {e['ground_truth']!r}, gspo {e['ours']} ({e['ours_how']}), "
                  f"verl {e['peer']} (pred {e['peer_pred']!r}); ends {e['response_tail'][-70:]!r}")
        if a.math_verify_rows:
            sub = Path(tmp) / "sub.jsonl"
            sub.write_text("".join(path.read_text(encoding="utf-8").splitlines(True)[: a.math_verify_rows]))
            wall_m, rep_m = run([str(sub), "--preset", "qwen3-8b-2x8", "--compare", "math-verify"])
            print(f"\n## first {a.math_verify_rows} rows --compare math-verify: {wall_m:.1f} s wall")
            print(table(rep_m))
    return 0


if __name__ == "__main__":
    sys.exit(main())

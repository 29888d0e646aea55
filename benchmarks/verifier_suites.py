"""False positives / false negatives of gspo's verifier, verl's math_dapo and math-verify on every labelled suite.

    .venv/bin/python benchmarks/verifier_suites.py [--peers ours,math_dapo,math_verify] [--by-shape SUITE]

The suites are the hand-labelled files under tests/rewards/data/ (docs/verifier.md, "The suites"). Peers are
called as verl calls them (benchmarks/peers.py). Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "rewards" / "data"
SUITES = {
    "corpus": DATA / "verifier_corpus.jsonl",
    "peer suite": DATA / "peer_suite_cases.jsonl",
    "adversarial": DATA / "adversarial_suite.jsonl",
    "commitments (#22)": DATA / "commitment_suite.jsonl",
}


def load(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def by_shape(rows: list[dict], peers: list[str]) -> str:
    from peers import errors, verdicts

    out = ["| shape | cases | " + " | ".join(f"{p} FP / FN" for p in peers) + " |", "|---|---:|" + "---:|" * len(peers)]
    shapes = collections.defaultdict(list)
    for r in rows:
        shapes[r.get("shape", "-")].append(r)
    for shape, rs in sorted(shapes.items()):
        cells = [" / ".join(str(len(x)) for x in errors(rs, verdicts(rs, p))) for p in peers]
        out.append(f"| {shape} | {len(rs)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    from peers import error_table

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers", default="ours,math_dapo,math_verify")
    ap.add_argument("--by-shape", help="also a per-shape table for this suite")
    args = ap.parse_args()
    peers = args.peers.split(",")
    print(error_table({name: load(p) for name, p in SUITES.items()}, tuple(peers)))
    if args.by_shape:
        print("\n" + by_shape(load(SUITES[args.by_shape]), peers))
    return 0


if __name__ == "__main__":
    sys.exit(main())

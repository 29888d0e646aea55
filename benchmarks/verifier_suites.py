"""False positives / false negatives of gspo's verifier, verl's math_dapo and math-verify on every labelled suite.

    .venv/bin/python benchmarks/verifier_suites.py [--peers ours,math_dapo,math_verify] [--by-shape SUITE]
                                                   [--before REF]

The suites are the hand-labelled files under tests/rewards/data/ (docs/verifier.md, "The suites"); the peer
suite is scored twice, on upstream's labels (peer_suite_cases.jsonl, untouched) and on gspo's (the same rows with
peer_suite_overlay.jsonl's relabels). Peers are called as verl calls them (benchmarks/peers.py).
`--before REF` adds a column with gspo's verifier as it was at git REF (its gspo_cli/ extracted into a temporary
folder and run in a subprocess; today's benchmarks/peers.py calls it) on today's files. `ours_strict` is gspo's
verdict counted right only when the decisive answer is a DAPO `Answer:` line (what an opt-in strict mode would
pay; issue #32). Prints Markdown.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and "--child" not in sys.argv:
    sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "rewards" / "data"
PEER_UPSTREAM = DATA / "peer_suite_cases.jsonl"
SUITES = {
    "corpus": DATA / "verifier_corpus.jsonl",
    "peer suite, upstream labels": PEER_UPSTREAM,
    "peer suite, gspo labels": PEER_UPSTREAM,
    "adversarial": DATA / "adversarial_suite.jsonl",
    "commitments (#22)": DATA / "commitment_suite.jsonl",
    "grader (#32)": DATA / "grader_suite.jsonl",
    "last commitment (#42)": DATA / "last_commit_suite.jsonl",
}


def load(name: str) -> list[dict]:
    rows = [json.loads(line) for line in SUITES[name].read_text(encoding="utf-8").splitlines() if line.strip()]
    if name == "peer suite, gspo labels":
        overlay = [json.loads(line) for line in (DATA / "peer_suite_overlay.jsonl").read_text().splitlines() if line]
        by_id = {o["id"]: o["label"] for o in overlay}
        rows = [{**r, "label": by_id.get(r["id"], r["label"])} for r in rows]
    return rows


def fp_fn(rows: list[dict], peer: str) -> tuple[int, int]:
    from peers import errors, verdicts

    fp, fn = errors(rows, verdicts(rows, peer))
    return len(fp), len(fn)


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


def before(ref: str) -> dict[str, tuple[int, int]]:
    """FP / FN of gspo's verifier at git `ref`, on today's suite files."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "gspo_cli"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": tmp}
        out = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True, capture_output=True,
                             text=True, cwd=tmp).stdout
    return {k: tuple(v) for k, v in json.loads(out.strip().splitlines()[-1]).items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers", default="ours,math_dapo,math_verify")
    ap.add_argument("--by-shape", help="also a per-shape table for this suite")
    ap.add_argument("--before", help="git ref: add gspo's FP / FN at that ref")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # run by --before with an old gspo_cli first on the path
        print(json.dumps({name: fp_fn(load(name), "ours") for name in SUITES}))
        return 0
    peers = args.peers.split(",")
    old = before(args.before) if args.before else None
    head = ["set", "cases"] + ([f"gspo at {args.before} FP / FN"] if old else []) + [f"{p} FP / FN" for p in peers]
    print("| " + " | ".join(head) + " |")
    print("|---|---:|" + "---:|" * (len(head) - 2))
    for name in SUITES:
        rows = load(name)
        cells = ([" / ".join(map(str, old[name]))] if old else []) + [" / ".join(map(str, fp_fn(rows, p))) for p in peers]
        print(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    if args.by_shape:
        print("\n" + by_shape(load(args.by_shape), peers))
    return 0


if __name__ == "__main__":
    sys.exit(main())

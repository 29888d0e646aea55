"""Benchmark the answer verifier against verl's math_dapo and math-verify, and print accuracy side by side.

    .venv/bin/python benchmarks/verifier.py [--n 10000] [--chars 32000] [--mv-sample 200] [--skip-accuracy]
    .venv/bin/python benchmarks/verifier.py --before REF [--rounds 7]   # old vs new, interleaved, one run

Speed: N responses of about 8k tokens (~32,000 characters of math-flavoured CoT with numbers and LaTeX) in
the shapes training produces (DAPO `Answer:` line, Qwen3 thinking + boxed summary, boxed + Answer, prose,
truncated/unclosed thinking), half right and half wrong. Each verifier runs in its own subprocess, so peak RSS
(its own `ru_maxrss`) is that verifier's alone; the same responses are rebuilt from the same seed in each
subprocess and only the scoring calls are timed, in CPU time (`time.process_time`): the figure is what a
response costs, not how busy the machine was (a shared machine's wall clock also counts time spent waiting
for a core). math-verify is far slower, so it scores every k-th response
(`--mv-sample` of them) and its responses/s comes from that sample. Also: per-call time of ours on hostile
inputs (200k characters, 5000 nested braces) and accuracy, false positives and false negatives of all three on
the labelled corpus, the peer-suite cases and the adversarial suite.

`--before REF` (issue #42) measures gspo's verifier at git REF (its gspo_cli/ extracted into a temporary folder) and
as it is now in one run, interleaved: each round scores the same responses with math_dapo, both versions of ours
(which goes first alternates) and math_dapo again, each in its own subprocess, and prints ours / math_dapo per
version and round and the medians. Comparing two separate runs would mostly compare how busy the machine was.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "rewards" / "data" / "verifier_corpus.jsonl"
PEER_SUITE = ROOT / "tests" / "rewards" / "data" / "peer_suite_cases.jsonl"  # a copy of shared/fixtures/verifier's
ADVERSARIAL = ROOT / "tests" / "rewards" / "data" / "adversarial_suite.jsonl"
N_BODIES = 64

# --------------------------------------------------------------------------- data

_SENT = [
    "Let $a_{{{i}}} = {x}$ and note that $a_{{{i}}}^2 - {y} = {z}$.",
    "Then the sum over all ${i}$ terms is $\\sum_{{k=1}}^{{{i}}} k = {z}$, so we subtract {y}.",
    "Wait, let me double-check: ${x} \\times {y} = {p}$, which is consistent with the earlier bound.",
    "Hmm, alternatively we can use the identity $\\binom{{{x}}}{{2}} = \\frac{{{x}({x}-1)}}{{2}}$.",
    "So the remainder when ${p}$ is divided by $1000$ is ${r}$, but that is only one case.",
    "By Vieta's formulas the product of the roots is ${y}$ and their sum is $-{x}$.",
    "We consider the triangle with sides ${x}$, ${y}$ and ${z}$; its area follows from Heron's formula.",
    "Thus there are {z} configurations so far, and we still need the cases with $n \\ge {i}$.",
]


def _body(rng: random.Random, chars: int) -> str:
    out, size = [], 0
    while size < chars:
        x, y = rng.randint(2, 999), rng.randint(2, 999)
        s = rng.choice(_SENT).format(i=rng.randint(1, 50), x=x, y=y, z=x * x - y, p=x * y, r=(x * y) % 1000)
        out.append(s)
        size += len(s) + 1
        if rng.random() < 0.08:
            out.append("\n\n")
    return " ".join(out)


def responses(n: int, chars: int, seed: int = 0):
    """Yield (response, ground_truth) pairs; the same sequence for the same arguments."""
    rng = random.Random(seed)
    bodies = [_body(rng, chars) for _ in range(N_BODIES)]
    for i in range(n):
        body = bodies[i % N_BODIES]
        gt = rng.randint(0, 999)
        ans = gt if rng.random() < 0.5 else gt + rng.randint(1, 50)
        kind = rng.random()
        if kind < 0.40:
            r = f"{body}\n\nAnswer: {ans}"
        elif kind < 0.70:
            r = f"<think>\n{body}\n</think>\n\nSumming up the cases gives the total.\n\n**Final Answer**\n\\[\n\\boxed{{{ans}}}\n\\]"
        elif kind < 0.80:
            r = f"{body}\n\nTherefore the answer is $\\boxed{{{ans}}}$.\n\nAnswer: {ans}"
        elif kind < 0.85:
            r = f"{body}\n\nTherefore, the final answer is {ans}."
        elif kind < 0.95:
            r = f"<think>\n{body} so maybe Answer: {ans}"  # truncated in the middle of thinking
        else:
            r = body  # truncated, no answer
        yield r, str(gt)


# --------------------------------------------------------------------------- one verifier in one process


def _scorer(name: str):
    if name == "ours":
        from gspo_cli.rewards import compute_score

        return lambda r, g: compute_score("math_dapo", r, g)["acc"]
    if name == "math_dapo":
        from verl.utils.reward_score.math_dapo import compute_score

        return lambda r, g: compute_score(r, g)["acc"]
    if name == "math_verify":
        import logging

        from peers import math_verify_acc

        logging.getLogger("math_verify").setLevel(logging.ERROR)
        return math_verify_acc
    raise SystemExit(f"unknown verifier {name}")


def _rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(name: str, n: int, chars: int, every: int) -> dict:
    score = _scorer(name)
    score("Answer: 1", "1")  # imports and first-call set-up are not part of the per-response cost
    base = _rss_mb()
    elapsed, done, right, total_chars = 0.0, 0, 0, 0
    for i, (r, g) in enumerate(responses(n, chars)):
        if i % every:
            continue
        t0 = time.process_time()
        ok = score(r, g)
        elapsed += time.process_time() - t0
        done += 1
        right += bool(ok)
        total_chars += len(r)
    return {
        "verifier": name,
        "scored": done,
        "seconds": elapsed,
        "per_s": done / elapsed,
        "ms_per": 1000 * elapsed / done,
        "baseline_rss_mb": base,
        "peak_rss_mb": _rss_mb(),
        "accepted": right,
        "mean_chars": total_chars / done,
    }


def hostile_ms() -> dict:
    from gspo_cli.rewards import compute_score

    cases = {
        "200k chars then Answer": "x" * 200_000 + "\nAnswer: 42",
        "200k chars of prose, no answer": ("the sum is 12 and " * 12_000)[:200_000],
        "5000 nested braces": "{" * 5000 + "42" + "}" * 5000,
        "boxed around 5000 nested braces": "\\boxed{" + "{" * 5000 + "42" + "}" * 5001,
        "5000 nested boxes": "\\boxed{" * 5000 + "42" + "}" * 5000,
        "30k 'Answer:' markers": "Answer: 1\n" * 30_000,
        "100k-char repetition, then a box (#22)": "the sum is 12 and " * 5600 + "\\boxed{42}",
        "50,000 nested braces in a box (#22)": "\\boxed{" + "{" * 50_000 + "42" + "}" * 50_001,
        "megabyte-long number (#22)": "Answer: " + "9" * 1_000_000,
        "megabyte-long number in a box (#22)": "\\boxed{" + "7" * 1_000_000 + "}",
        "megabyte of digits and commas (#22)": "Answer: " + "1," * 500_000 + "1",
    }
    out = {}
    for name, text in cases.items():
        compute_score("math_dapo", text, "42")
        t0 = time.process_time()
        for _ in range(5):
            compute_score("math_dapo", text, "42")
        out[name] = 1000 * (time.process_time() - t0) / 5
    return out


def batch_step(n: int, chars: int, workers: int) -> dict:
    """One training step's worth (256 prompts x 16) through score_batch: serial vs the process pool."""
    from gspo_cli.rewards import score_batch

    items = [("math_dapo", r, g) for r, g in responses(n, chars, seed=1)]
    out = {}
    for w in (0, workers):
        t0 = time.perf_counter()
        res = score_batch(items, workers=w, chunk_size=64)
        dt = time.perf_counter() - t0
        out[w] = (dt, sum(r["acc"] for r in res), sum(1 for r in res if r["error"]))
    return out


# --------------------------------------------------------------------------- driver


def _child(args, name: str, every: int, code: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--child", name, "--n", str(args.n), "--chars", str(args.chars), "--every",
           str(every)] + (["--code", code] if code else [])
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    out, _ = p.communicate()
    if p.returncode:
        raise SystemExit(f"{name} failed with exit code {p.returncode}")
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--chars", type=int, default=32_000, help="characters per response (~8k tokens)")
    ap.add_argument("--mv-sample", type=int, default=200, help="responses math-verify scores (every n/k-th)")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--workers", type=int, default=2, help="pool size for the score_batch step")
    ap.add_argument("--child")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--code", help=argparse.SUPPRESS)  # a child: import gspo_cli from this folder
    ap.add_argument("--before", help="git ref: ours at that ref vs now, interleaved (ours / math_dapo per round)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    if args.child:
        if args.code:
            sys.path.insert(0, args.code)
        print(json.dumps(run_one(args.child, args.n, args.chars, args.every)))
        return 0
    if args.before:
        return interleaved(args)

    every_mv = max(1, args.n // max(1, args.mv_sample))
    rows = [_child(args, "ours", 1), _child(args, "math_dapo", 1), _child(args, "math_verify", every_mv)]
    by = {r["verifier"]: r for r in rows}
    print(f"\n## Speed: {args.n} responses, mean {rows[0]['mean_chars']:.0f} characters (~8k tokens)\n")
    print("| verifier | scored | responses/s (CPU) | CPU ms/response | peak RSS MB | RSS over baseline MB | accepted |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        note = f" (every {every_mv}th)" if r["verifier"] == "math_verify" and every_mv > 1 else ""
        print(
            f"| {r['verifier']}{note} | {r['scored']} | {r['per_s']:,.0f} | {r['ms_per']:.3f} | "
            f"{r['peak_rss_mb']:.0f} | {r['peak_rss_mb'] - r['baseline_rss_mb']:.1f} | {r['accepted']} |"
        )
    t_ours, t_dapo, t_mv = (by[k]["ms_per"] for k in ("ours", "math_dapo", "math_verify"))
    print(
        f"\nours / math_dapo time: {t_ours / t_dapo:.2f}x (target <= 2x); "
        f"math-verify / ours time: {t_mv / t_ours:.0f}x (target >= 10x)"
    )

    print("\n## Hostile inputs (ours, CPU ms per call, mean of 5)\n")
    print("| input | ms |\n|---|---:|")
    for name, ms in hostile_ms().items():
        print(f"| {name} | {ms:.2f} |")

    step = batch_step(4096, args.chars, args.workers)
    print("\n## score_batch: one step of 4096 responses (256 prompts x 16)\n")
    print("| mode | seconds | responses/s | accepted | errors |\n|---|---:|---:|---:|---:|")
    for w, (dt, acc, err) in step.items():
        mode = "serial (workers=0)" if w == 0 else f"process pool (workers={w}, spawn included)"
        print(f"| {mode} | {dt:.2f} | {4096 / dt:,.0f} | {acc} | {err} |")

    if not args.skip_accuracy:
        from peers import accuracy_table, error_table, format_table

        sets = {
            "labelled corpus (verifier_corpus.jsonl)": _load(CORPUS),
            "peer-suite cases (peer_suite_cases.jsonl)": _load(PEER_SUITE),
            "adversarial suite (adversarial_suite.jsonl)": _load(ADVERSARIAL),
            "commitment suite (commitment_suite.jsonl, #22)": _load(ADVERSARIAL.with_name("commitment_suite.jsonl")),
        }
        print("\n## Accuracy (agreement with the labels)\n")
        print(format_table(accuracy_table(sets)))
        print("\n## False positives / false negatives\n")
        print(error_table(sets, ("ours", "math_dapo", "math_verify")))
    return 0


def interleaved(args) -> int:
    """ours at `args.before` and now, against math_dapo, in alternating order within one run (see the docstring)."""
    import statistics
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "gspo_cli"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        ratios: dict[str, list[float]] = {args.before: [], "now": []}
        print(f"| round | ours at {args.before} / math_dapo | ours now / math_dapo | ours CPU ms/response "
              f"({args.before}, now) |\n|---|---:|---:|---|")
        for k in range(args.rounds):
            order = [(args.before, tmp), ("now", str(ROOT))][:: 1 if k % 2 == 0 else -1]
            dapo = [_child(args, "math_dapo", 1)["ms_per"]]
            ours = {label: _child(args, "ours", 1, code)["ms_per"] for label, code in order}
            dapo.append(_child(args, "math_dapo", 1)["ms_per"])
            for label in ratios:
                ratios[label].append(ours[label] / statistics.mean(dapo))
            print(f"| {k + 1} | {ratios[args.before][-1]:.2f}x | {ratios['now'][-1]:.2f}x | "
                  f"{ours[args.before]:.3f}, {ours['now']:.3f} |", flush=True)
    print(f"\nmedian ours / math_dapo: {args.before} {statistics.median(ratios[args.before]):.2f}x, "
          f"now {statistics.median(ratios['now']):.2f}x ({args.rounds} rounds)")
    return 0


def _load(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


if __name__ == "__main__":
    sys.exit(main())

"""Time `gspo plan`'s layout search for the 4 x 16 preset (target: the whole search under a second), next to one
preflight verdict and one step prediction, in one run.

    .venv/bin/python benchmarks/plan_search.py [--repeat 7] [--preset qwen3-32b]

Rows (median and min wall time, median CPU time of --repeat, after one warm-up, in this process; imports and preset loading excluded):
- search: every candidate layout (rollout TP x SP x offload x memory utilisation x batched tokens x micro-batch
  tokens), preflight's verdict on each, the step-time model on the accepted ones, ranking.
- preflight.evaluate, one layout: the memory verdict alone (what dominates the search).
- predict, one layout: the step-time model alone.
- gspo plan, whole command: a fresh `gspo plan --preset P --json` process, wall time (imports included).
No peer predicts step time before launch (verl, MindSpeed-RL, OpenRLHF, ROLL, slime, TRL), so there is nothing
to run side by side; the point of comparison is the cost of finding out by launching: hours.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(fn, repeat: int) -> tuple[float, float, float]:
    """(median wall, min wall, median CPU seconds of this process): on a loaded machine wall time is inflated by
    waiting for a core, CPU time is not."""
    fn()
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--preset", default="qwen3-32b")
    args = ap.parse_args()
    from gspo_cli.config.presets import load_preset
    from gspo_cli.engines.verl import preflight
    from gspo_cli.plan import layouts, memory, model
    from gspo_cli.plan.workload import from_preset
    from gspo_cli.sizing import profiles

    preset = load_preset(args.preset)
    facts, prof = memory.facts(preset), profiles.get(preset.cluster.profile)
    result = layouts.search(preset, facts, prof, preflight=preflight.evaluate)
    work = from_preset(preset, facts)
    rows = [
        (f"search ({result.evaluated} layouts, {result.rejected} rejected)",
         timed(lambda: layouts.search(preset, facts, prof, preflight=preflight.evaluate), args.repeat)),
        ("preflight.evaluate, one layout", timed(lambda: preflight.evaluate(preset, facts, None), args.repeat * 20)),
        ("predict, one layout", timed(lambda: model.predict(work, prof), args.repeat * 20)),
    ]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "gspo_cli", "plan", "--preset", args.preset, "--json"]
    rows.append(("gspo plan --json, whole process", timed(lambda: subprocess.run(cmd, env=env, check=True,
                                                                              capture_output=True), 3)))
    print(f"preset {preset.name}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("| what | median wall ms | min wall ms | median CPU ms |")
    print("|---|---:|---:|---:|")
    for name, (med, best, cpu) in rows:
        cpu_text = "-" if name.startswith("gspo plan") else f"{1000 * cpu:.2f}"  # a child process: not ours
        print(f"| {name} | {1000 * med:.2f} | {1000 * best:.2f} | {cpu_text} |")


if __name__ == "__main__":
    main()

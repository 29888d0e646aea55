"""The native engine's fixed cost per step, from its own timing_s: timing_s/step minus the timed phases.

    GSPO_HOME=/tmp/plan_home .venv/bin/gspo prepare-data --preset tiny --local
    GSPO_HOME=/tmp/plan_home .venv/bin/gspo train --preset tiny --local --run-name other-a \\
        --set trainer.total_training_steps=40 --set trainer.save_freq=20 --set trainer.test_freq=20
    .venv/bin/python benchmarks/plan_native_overhead.py /tmp/plan_home/runs/other-a

prints the per-step residual (median over steps 3.., the first two are warm-up), the checkpoint and validation
seconds, and the share of the step they are: the figures behind `profiles.NATIVE_STEP_FIXED_S`.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from gspo_cli.metrics.jsonl import last_per_step

PHASES = ("gen", "reward", "old_log_prob", "update_actor")


def main(run: str) -> None:
    rows = [d for d in last_per_step(Path(run) / "metrics.jsonl").values() if "timing_s/step" in d]
    steady = rows[2:] or rows
    residual = [r["timing_s/step"] - sum(r.get(f"timing_s/{p}", 0.0) for p in PHASES) for r in steady]
    step = [r["timing_s/step"] for r in steady]
    adv = [r.get("timing_s/adv", 0.0) for r in steady]
    testing = [r["timing_s/testing"] for r in rows if "timing_s/testing" in r]
    print("| figure | median | min | max | steps |")
    print("|---|---:|---:|---:|---:|")
    for name, vals in (("timing_s/step", step), ("step - timed phases (other)", residual), ("timing_s/adv", adv),
                       ("timing_s/testing (per validation)", testing)):
        if vals:
            print(f"| {name} | {statistics.median(vals):.4f} | {min(vals):.4f} | {max(vals):.4f} | {len(vals)} |")


if __name__ == "__main__":
    main(sys.argv[1])

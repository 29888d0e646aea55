"""Time `gspo train --preset qwen3-32b --dry-run` to its verdict, next to the time verl itself takes to reject a
typo'd key, in one run.

    .venv/bin/python benchmarks/dry_run.py [--repeat 3]

Rows:
- gspo dry-run, cold: a fresh $GSPO_HOME, so verl's validators run (imports verl, torch, transformers).
- gspo dry-run, warm, before: the same preset again, stage 1 (Hydra compose + type check) run although the verdict
  is cached (GSPO_VERL_CHECK_RECOMPOSE=1, how every warm dry-run worked before).
- gspo dry-run, warm: the same preset again: the cached verdict covers both stages, no compose.
- gspo dry-run, typo'd --set: `--set overrides.verl=[...lrr=...]` rejected at Hydra compose (exit 2).
- verl main_ppo, typo'd key: `python -m verl.trainer.main_ppo <the compiled overrides> <typo>` until it exits;
  this is what a user without gspo waits for before seeing the same error (verl imports torch and ray first).
Each figure is wall time of a fresh process until it exits (the verdict is its last line), median of --repeat.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TYPO = "actor_rollout_ref.actor.optim.lrr=2e-6"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=env.get("BENCH_CWD", REPO), capture_output=True, text=True)
    return time.perf_counter() - t0, proc.returncode, proc.stdout + proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    gspo = [sys.executable, "-m", "gspo_cli"]
    rows: list[tuple[str, list[float], int, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = dict(os.environ, COLUMNS="160")
        base.pop("RAY_ADDRESS", None)

        cold = []
        for i in range(args.repeat):
            env = dict(base, GSPO_HOME=f"{tmp}/cold{i}")
            t, rc, out = timed([*gspo, "train", "--preset", "qwen3-32b", "--dry-run"], env)
            assert "Verdict:" in out, out[-2000:]
            cold.append(t)
        rows.append(("gspo train --dry-run (cold: verl validators run)", cold, rc, _verdict(out)))

        env = dict(base, GSPO_HOME=f"{tmp}/cold0")
        # before/after in one run: the warm path as it was (stage 1, Hydra compose + types, on every call) and as
        # it is (the cached verdict covers stage 1 too: no compose); interleaved, so both see the same load.
        before, warm = [], []
        for _ in range(args.repeat):
            t, rc, out = timed([*gspo, "train", "--preset", "qwen3-32b", "--dry-run"],
                               dict(env, GSPO_VERL_CHECK_RECOMPOSE="1"))
            before.append(t)
            t, rc, out = timed([*gspo, "train", "--preset", "qwen3-32b", "--dry-run"], env)
            warm.append(t)
        rows.append(("warm, before: compose on every call", before, rc, _verdict(out)))
        rows.append(("gspo train --dry-run (warm: verl verdict cached)", warm, rc, _verdict(out)))

        typo = []
        for _ in range(args.repeat):
            t, rc, out = timed([*gspo, "train", "--preset", "qwen3-32b", "--dry-run", "--set",
                                f"overrides.verl=[{TYPO}]"], env)
            typo.append(t)
        rows.append(("gspo train --dry-run --set typo", typo, rc, _first(out, "rejected override")))

        # verl itself, with exactly the overrides gspo compiled plus the typo.
        sys.path.insert(0, str(REPO))
        os.environ["GSPO_HOME"] = f"{tmp}/cold0"
        from gspo_cli.engines.verl import launch

        plan = launch.make_plan("qwen3-32b", [], schema=False)
        verl_cmd = [sys.executable, "-m", "verl.trainer.main_ppo", *plan.compiled.overrides, TYPO]
        vt = []
        vdir = Path(tmp) / "verl-cwd"
        vdir.mkdir()
        for _ in range(args.repeat):
            t, rc, out = timed(verl_cmd, dict(base, BENCH_CWD=str(vdir), HYDRA_FULL_ERROR="0"))
            vt.append(t)
        rows.append(("python -m verl.trainer.main_ppo ... typo (verl alone)", vt, rc,
                     _first(out, "Could not override")))

    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; median and best of {args.repeat}")
    print(f"| {'what':54} | median s | min s | exit | verdict |")
    print(f"|{'-' * 56}|---------:|------:|-----:|---------|")
    for name, times, rc, verdict in rows:
        print(f"| {name:54} | {statistics.median(times):8.2f} | {min(times):5.2f} | {rc:4} | {verdict[:90]} |")
    return 0


def _verdict(out: str) -> str:
    return _first(out, "Verdict:")


def _first(out: str, marker: str) -> str:
    for line in out.splitlines():
        if marker in line:
            return " ".join(line.split())
    return "(not found)"


if __name__ == "__main__":
    sys.exit(main())

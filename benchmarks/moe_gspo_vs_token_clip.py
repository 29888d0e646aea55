"""GSPO against GRPO-style token-level clipping on the tiny Mixture-of-Experts, several seeds, one run of this script.

Both arms are `presets/tiny-moe.yaml` (builtin:tiny-moe: Qwen3MoeForCausalLM, 8 experts, top-2; the tiny arith task,
32 prompts x 16 samples per step, 4 mini-batches per step so every step makes 4 policy updates; lr, entropy bonus,
overlong penalty, seeds all equal) through the native engine, which logs the routing metrics (moe/*):
- `gspo`: algorithm.loss_mode gspo, sequence-level ratio and clip 3e-4 / 4e-4 (the paper's, the preset's);
- `token-clip`: algorithm.loss_mode vanilla (token-level PPO/GRPO clip, verl's compute_policy_loss_vanilla) with
  verl's default token clip 0.2 / 0.2 (actor.yaml clip_ratio_low/high) and dual-clip 3.0.
Each run is a user's `gspo train --preset tiny-moe --local` in one temporary $GSPO_HOME (arith prepared once).

Printed: per arm, mean and [min, max] over the seeds (the noise band) of the validation accuracy at each
validation step (greedy, 200 problems), the training accuracy per window of steps, the first step whose 10-step
mean training accuracy reaches 0.9, the clip fraction, and the routing metrics: expert flip fraction rollout ->
trained policy and per update, the router's share of the log-prob gap. A tiny model on a toy task says whether the
two losses differ here, not whether the paper's claim (Qwen3-30B-A3B needs Routing Replay under GRPO, not under
GSPO) holds at scale: docs/benchmarks.md says what it can and cannot show.

    .venv/bin/python benchmarks/moe_gspo_vs_token_clip.py [--seeds 1 2 3] [--steps 250] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARMS = {
    "gspo": ["algorithm.loss_mode=gspo"],  # the preset's clip 3e-4 / 4e-4
    "token-clip": ["algorithm.loss_mode=vanilla", "algorithm.clip_ratio_low=0.2", "algorithm.clip_ratio_high=0.2",
                   "algorithm.clip_ratio_c=3.0"],
}
ROUTING = ("moe/routing_flip_frac", "moe/routing_flip_frac_update", "moe/router_gap_share", "moe/router_seq_gap_share",
           "moe/load_cv")


def _gspo(home: Path, *args: str, timeout: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "GSPO_HOME": str(home), "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "gspo_cli", *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"gspo {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def run_arm(home: Path, arm: str, seed: int, steps: int, reuse: bool = False) -> tuple[Path, float]:
    name = f"{arm}-s{seed}"
    done = home / "runs" / name / "metrics.jsonl"
    if reuse and done.is_file() and max(read(done.parent), default=0) >= steps:
        return done.parent, float("nan")  # already trained in this GSPO_HOME: summarised again, not rerun
    sets = [*ARMS[arm], f"trainer.seed={seed}", f"trainer.total_training_steps={steps}", "trainer.save_freq=-1",
            f"trainer.test_freq={min(25, steps)}"]
    started = time.perf_counter()
    _gspo(home, "train", "--preset", "tiny-moe", "--local", "--run-name", name,
          *[a for s in sets for a in ("--set", s)], timeout=6 * 3600)
    return home / "runs" / name, time.perf_counter() - started


def read(run: Path) -> dict[int, dict]:
    rows = {}
    for line in (run / "metrics.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            rows[record["step"]] = record["data"]
    return rows


def summarise(rows: dict[int, dict], window: int) -> dict:
    steps = sorted(s for s in rows if s > 0)
    val = {s: d["val-core/arith/acc/mean@1"] for s, d in rows.items() if "val-core/arith/acc/mean@1" in d}
    acc = [rows[s]["critic/acc/mean"] for s in steps]
    first_09 = next((steps[i] for i in range(9, len(acc)) if statistics.fmean(acc[i - 9:i + 1]) >= 0.9), None)

    def windowed(key):
        out = {}
        for start in range(1, steps[-1] + 1, window):
            vals = [rows[s][key] for s in range(start, start + window) if s in rows and key in rows[s]]
            if vals:
                out[start] = statistics.fmean(vals)
        return out

    def mean_of(key, lo=1, hi=None):
        vals = [rows[s][key] for s in steps if lo <= s <= (hi or steps[-1]) and key in rows[s]]
        return statistics.fmean(vals) if vals else None

    return {"val": val, "acc": windowed("critic/acc/mean"), "reward": windowed("critic/score/mean"),
            "clipfrac": windowed("actor/pg_clipfrac"),
            "first_09": first_09, "final_acc": statistics.fmean(acc[-10:]),
            "clipfrac_mean": mean_of("actor/pg_clipfrac"),
            "routing": {k: mean_of(k) for k in ROUTING},
            "routing_early": {k: mean_of(k, 1, 100) for k in ROUTING},
            "flip": windowed("moe/routing_flip_frac"), "flip_update": windowed("moe/routing_flip_frac_update")}


def band(values: list[float | None]) -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return "-"
    if len(vals) < len(values):
        return f"{statistics.fmean(vals):.3f} [{min(vals):.3f}, {max(vals):.3f}] ({len(values) - len(vals)} never)"
    return f"{statistics.fmean(vals):.3f} [{min(vals):.3f}, {max(vals):.3f}]"


def table(results: dict[str, list[dict]]) -> str:
    arms = list(results)
    lines = ["| | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]

    def row(label, get):
        lines.append(f"| {label} | " + " | ".join(band([get(r) for r in results[a]]) for a in arms) + " |")

    first = results[arms[0]][0]
    for step in sorted(first["val"]):
        row(f"val acc @ step {step}", lambda r, s=step: r["val"].get(s))
    for start in sorted(first["acc"]):
        row(f"train acc, steps {start}-{start + WINDOW - 1}", lambda r, s=start: r["acc"].get(s))
    for start in sorted(first["reward"]):
        row(f"reward critic/score/mean, steps {start}-{start + WINDOW - 1}", lambda r, s=start: r["reward"].get(s))
    for start in sorted(first["clipfrac"]):
        row(f"actor/pg_clipfrac, steps {start}-{start + WINDOW - 1}", lambda r, s=start: r["clipfrac"].get(s))
    row("first step with 10-step train acc >= 0.9", lambda r: r["first_09"])
    row("train acc, last 10 steps", lambda r: r["final_acc"])
    row("actor/pg_clipfrac (mean over the run)", lambda r: r["clipfrac_mean"])
    for key in ROUTING:
        row(f"{key} (mean, steps 1-100)", lambda r, k=key: r["routing_early"][k])
        row(f"{key} (mean over the run)", lambda r, k=key: r["routing"][k])
    for start in sorted(first["flip"]):
        row(f"moe/routing_flip_frac, steps {start}-{start + WINDOW - 1}", lambda r, s=start: r["flip"].get(s))
    return "\n".join(lines)


WINDOW = 50


def main() -> int:
    global WINDOW
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument("--json", type=Path, help="write every run's summary here")
    ap.add_argument("--home", type=Path, help="GSPO_HOME to use (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="summarise runs already trained in --home instead of "
                    "training them again")
    args = ap.parse_args()
    WINDOW = args.window
    home = args.home or Path(tempfile.mkdtemp(prefix="gspo-moe-bench-"))
    print(f"GSPO_HOME {home}", flush=True)
    _gspo(home, "prepare-data", "--preset", "tiny-moe", "--local", timeout=1800)
    results: dict[str, list[dict]] = {arm: [] for arm in ARMS}
    walls: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for seed in args.seeds:
        for arm in ARMS:
            run, wall = run_arm(home, arm, seed, args.steps, args.reuse)
            summary = summarise(read(run), args.window)
            results[arm].append(summary)
            walls[arm].append(wall)
            print(f"{arm} seed {seed}: {wall:.0f} s (nan: reused), final train acc {summary['final_acc']:.3f}, first >= 0.9 at "
                  f"{summary['first_09']}, clipfrac {summary['clipfrac_mean']:.3f}, flip "
                  f"{summary['routing']['moe/routing_flip_frac']:.4f}", flush=True)
    print()
    print(f"tiny-moe, {args.steps} steps, seeds {args.seeds}: mean [min, max] over the seeds")
    print(table(results))
    print("\nwall per run (s): " + ", ".join(f"{a} {statistics.fmean(w):.0f}" for a, w in walls.items()))
    print(f"curves of every run: gspo report {' '.join(f'{a}-s{s}' for s in args.seeds for a in ARMS)} "
          f"(GSPO_HOME={home})")
    if args.json:
        args.json.write_text(json.dumps({"seeds": args.seeds, "steps": args.steps, "arms": ARMS, "results": results,
                                         "walls": walls}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

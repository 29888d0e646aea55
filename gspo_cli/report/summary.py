"""summary.md: final numbers of one run, or a side-by-side table of several. Accuracies are always percentages."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from gspo_cli.metrics.names import VAL_KEY, val_keys
from gspo_cli.report.data import RunData

SUMMARY_METRICS = (
    ("training reward (critic/score/mean)", "critic/score/mean"),
    ("response length, mean tokens", "response_length/mean"),
    ("pg_clipfrac", "actor/pg_clipfrac"),
    ("ppo_kl", "actor/ppo_kl"),
    ("grad norm", "actor/grad_norm"),
    ("step time, s", "timing_s/step"),
    ("generation time, s", "timing_s/gen"),
    ("update time, s", "timing_s/update_actor"),
)
EVAL_FOOTNOTE = ("pass@k is the unbiased estimator 1 - C(n-c,k)/C(n,k); maj@k votes within blocks of k samples "
                 "(see results.json `definitions`).")


def fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.1f}"
    if abs(v) >= 0.01:
        return f"{v:.4f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def final_rows(series) -> list[dict[str, Any]]:
    """One row per headline metric: final value and step, mean over the last 10% of steps, min, max.
    Validation accuracies carry `pct: True` (shown as percentages, like eval accuracies)."""
    rows = []
    wanted = [(label, key, False) for label, key in SUMMARY_METRICS] + [
        (f"validation accuracy, {m['source']} {m['stat']} ({k})", k, True)
        for k in val_keys(series) if (m := VAL_KEY.match(k))
    ]
    for label, key, is_pct in wanted:
        pts = series.get(key)
        if not pts:
            continue
        values = [v for _, v in pts]
        tail = values[-max(1, len(values) // 10):]
        rows.append({"metric": label, "key": key, "final": values[-1], "final_step": pts[-1][0],
                     "last10pct_mean": sum(tail) / len(tail), "min": min(values), "max": max(values),
                     "points": len(values), "pct": is_pct})
    return rows


def cell(row: dict[str, Any], field: str) -> str:
    return pct(row[field]) if row.get("pct") else fmt(row[field])


def eval_rows(evals: list[dict]) -> list[dict[str, Any]]:
    rows = []
    for e in evals:
        m, s = e.get("metrics") or {}, e.get("settings") or {}
        if not m:
            continue
        n = m.get("n")
        rows.append({
            "benchmark": e.get("benchmark"), "step": e["_step"], "n": n,
            "avg": m.get(f"avg@{n}"), "stderr": m.get(f"avg@{n}_stderr"),
            "pass": {k: m.get(f"pass@{k}") for k in s.get("k", [])},
            "maj": {k: m.get(f"maj@{k}") for k in s.get("k", [])},
            "extraction_rate": m.get("extraction_rate"), "truncation_rate": m.get("truncation_rate"),
            "length_mean": m.get("response_length_mean"), "temperature": s.get("temperature"),
            "top_p": s.get("top_p"), "max_tokens": s.get("max_tokens"), "dir": e["_dir"],
            "device": s.get("device"),
        })
    return rows


def config_line(config: dict[str, Any]) -> str:
    parts = []
    if config.get("name"):
        parts.append(f"preset `{config['name']}`")
    if (config.get("model") or {}).get("path"):
        parts.append(f"model `{config['model']['path']}`")
    if (config.get("trainer") or {}).get("engine"):
        parts.append(f"engine `{config['trainer']['engine']}`")
    return ", ".join(parts)


def _final_table(series) -> list[str]:
    rows = final_rows(series)
    if not rows:
        return []
    lines = ["## Final numbers", "", "| metric | final | at step | mean of last 10% | min | max |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['metric']} | {cell(r, 'final')} | {r['final_step']} | {cell(r, 'last10pct_mean')} | "
                     f"{cell(r, 'min')} | {cell(r, 'max')} |")
    return lines + [""]


def _eval_table(evals: list[dict]) -> list[str]:
    ev = eval_rows(evals)
    if not ev:
        return []
    ks = sorted({k for r in ev for k in r["pass"]})
    head = ["benchmark", "step", "n", "avg@n ± stderr"] + [f"pass@{k}" for k in ks] + [f"maj@{k}" for k in ks]
    head += ["extracted", "truncated", "mean tokens", "sampling"]
    lines = ["## Evaluations", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in ev:
        cells = [str(r["benchmark"]), str(r["step"]), str(r["n"]), f"{pct(r['avg'])} ± {100 * (r['stderr'] or 0):.1f}"]
        cells += [pct(r["pass"].get(k)) for k in ks] + [pct(r["maj"].get(k)) for k in ks]
        cells += [pct(r["extraction_rate"]), pct(r["truncation_rate"]), fmt(r["length_mean"]),
                  f"T={r['temperature']}, top_p={r['top_p']}, max {r['max_tokens']} tok"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + ["", EVAL_FOOTNOTE, ""]


def _charts_section(charts: list[tuple[str, str]], missing: list[str]) -> list[str]:
    lines = []
    if charts:
        lines += ["## Charts", ""]
        for title, file in charts:
            lines += [f"### {title}", "", f"![{title}]({file})", ""]
    if missing:
        lines += ["## Not charted", "", "No data logged for: " + ", ".join(missing) + ".", ""]
    return lines


def _health_section(runs: list[RunData]) -> list[str]:
    events = [(run.name, ev) for run in runs for ev in run.health]
    if not events:
        return []
    lines = ["## Health events", "", "| run | step | severity | rule | message |", "|---|---:|---|---|---|"]
    for name, ev in events[:50]:
        lines.append(f"| {name} | {ev['step']} | {ev.get('severity', '')} | {ev.get('rule', '')} | "
                     f"{str(ev.get('message', '')).replace('|', '/')} |")
    return lines + (["", f"({len(events) - 50} more in health.jsonl)"] if len(events) > 50 else []) + [""]


def single_summary(run: RunData, charts: list[tuple[str, str]], missing: list[str]) -> str:
    lines = [f"# Run report: {run.name}", ""]
    if config_line(run.config):
        lines += [config_line(run.config), ""]
    steps = sorted({s for pts in run.series.values() for s, _ in pts})
    if steps:
        lines += [f"Steps logged: {steps[0]}–{steps[-1]} ({len(steps)} steps), from `{run.path / 'metrics.jsonl'}`.",
                  ""]
    from gspo_cli.report.data import metrics_warning

    if metrics_warning(run):
        lines += [f"**Warning:** {metrics_warning(run)}.", ""]
    lines += _final_table(run.series) + _eval_table(run.evals) + _health_section([run])
    return "\n".join(lines + _charts_section(charts, missing))


def write(out: Path, text: str) -> None:
    from gspo_cli.fsutil import atomic_write_text

    atomic_write_text(out / "summary.md", text)

"""`gspo report RUN`: PNG curves from metrics.jsonl and the run's eval results, plus summary.md.

Reads verl's file-logger format (`{"step": N, "data": {metric: value}}`), which both engines write, so native
and verl runs report the same way. A resumed run may log a step twice: the later line wins. A torn last line
(a run killed mid-write) is skipped. Every chart shows the raw series faint and an EMA-smoothed line on top;
charts whose metrics were never logged are listed in the summary instead of drawn empty.
matplotlib (Agg) is imported only when drawing.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gspo_cli.errors import ConfigError, DataError
from gspo_cli.metrics.jsonl import Series, read_series

# ------------------------------------------------------------------ reading


def resolve_run(ref: str, preset=None) -> Path:
    """A run folder: a path, `latest`, or a run name under the runs dir."""
    from gspo_cli import layout

    path = Path(ref).expanduser()
    if path.is_dir():
        return path
    if ref == "latest":
        return layout.latest_run(preset)
    run = layout.run_dir(ref, preset)
    if not run.is_dir():
        raise ConfigError(f"no run {ref!r} (looked for a folder and in {layout.runs_dir(preset)})",
                          "pass a run folder, a run name or `latest`")
    return run


def read_evals(run: Path) -> list[dict[str, Any]]:
    """The results.json of every finished eval of this run, sorted by (benchmark, step)."""
    found = []
    for path in sorted((run / "eval").glob("*/results.json")):
        try:
            res = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        step = (res.get("model") or {}).get("step")
        if step is None:
            m = re.search(r"-(\d+)$", path.parent.name)
            step = int(m.group(1)) if m else None
        res["_step"] = step
        res["_dir"] = path.parent.name
        found.append(res)
    return sorted(found, key=lambda r: (r.get("benchmark", ""), r["_step"] if r["_step"] is not None else -1))


# ------------------------------------------------------------------ smoothing


def ema_weight(length: int) -> float:
    """Heavier smoothing for longer runs: an EMA whose span is ~1/15 of the series (0 = none for tiny series)."""
    span = max(1.0, length / 15)
    return 1 - 2 / (span + 1)


def ema(values: list[float], weight: float) -> list[float]:
    """Debiased exponential moving average (TensorBoard's smoothing)."""
    out, acc, norm = [], 0.0, 0.0
    for v in values:
        acc = weight * acc + (1 - weight) * v
        norm = weight * norm + (1 - weight)
        out.append(acc / norm if norm > 0 else v)
    return out


# ------------------------------------------------------------------ chart specs


@dataclass(frozen=True)
class Line:
    label: str
    keys: tuple[str, ...]  # first key present is used (engines name a few metrics differently)


@dataclass(frozen=True)
class Panel:
    ylabel: str
    lines: tuple[Line, ...]
    title: str = ""


@dataclass(frozen=True)
class Chart:
    name: str  # file stem
    title: str
    panels: tuple[Panel, ...]
    kind: str = "lines"  # lines | val | time | eval


CHARTS: tuple[Chart, ...] = (
    Chart("reward", "Training reward", (Panel("mean reward per response", (
        Line("score (verifier)", ("critic/score/mean",)),
        Line("reward (after shaping)", ("critic/rewards/mean",)),
    )),)),
    Chart("val_accuracy", "Validation accuracy", (Panel("accuracy (%)", ()),), kind="val"),
    Chart("response_length", "Response length", (Panel("tokens", (
        Line("mean", ("response_length/mean",)),
        Line("max", ("response_length/max",)),
    )),)),
    Chart("clipfrac_kl", "GSPO clipping and policy drift", (
        Panel("fraction clipped", (Line("pg_clipfrac (tokens)", ("actor/pg_clipfrac",)),
                                   Line("clipped sequences", ("actor/pg_clipfrac_seq", "actor/seq_clipfrac"))),
              "pg_clipfrac"),
        Panel("approx. KL (nats)", (Line("ppo_kl", ("actor/ppo_kl",)),), "ppo_kl (old -> new policy)"),
    )),
    Chart("grad_norm", "Gradient norm", (Panel("L2 norm (before clipping)", (
        Line("grad_norm", ("actor/grad_norm",)),)),)),
    Chart("step_time", "Time per training step", (Panel("seconds per step", (
        Line("generation", ("timing_s/gen",)),
        Line("policy update", ("timing_s/update_actor",)),
        Line("other", ("timing_s/step",)),
    )),), kind="time"),
    Chart("eval_accuracy", "Eval accuracy per checkpoint", (Panel("accuracy (%)", ()),), kind="eval"),
)

# verl also logs std@N, best@N/mean, maj@N/mean ... under the same prefix; the curve is the mean over samples
# (a data_source may hold slashes: verl's own examples use `openai/gsm8k`, `lighteval/MATH`)
VAL_KEY = re.compile(r"^val-(?:core|aux)/(?P<source>.+)/(?P<metric>acc|reward|score)/(?P<stat>mean@\d+)$")


def _pick(series: Series, keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if series.get(k)), None)


def val_keys(series: Series) -> list[str]:
    """Validation accuracy series (`val-core/<source>/acc/mean@N` and friends), sorted."""
    return sorted(k for k in series if (m := VAL_KEY.match(k)) and m["metric"] == "acc" and series[k])


# ------------------------------------------------------------------ drawing


def _style(plt) -> None:
    plt.rcParams.update({
        "figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
        "axes.spines.right": False, "axes.titlesize": 12, "axes.labelsize": 10, "legend.fontsize": 9,
        "legend.frameon": False,
    })


def _plot_smoothed(ax, steps, values, label, color):
    ax.plot(steps, values, color=color, alpha=0.25, linewidth=1.0)
    if len(values) > 2:
        ax.plot(steps, ema(values, ema_weight(len(values))), color=color, linewidth=2.0, label=label)
    else:
        ax.plot(steps, values, color=color, linewidth=2.0, marker="o", label=label)


def _finish(fig, ax_list, title: str, run_name: str, path: Path, smoothed: bool = True) -> None:
    for ax in ax_list:
        ax.set_xlabel("training step")
        if ax.get_legend_handles_labels()[0] and ax.get_legend() is None:
            ax.legend(loc="best")
    note = "  (faint: raw, bold: EMA-smoothed)" if smoothed else ""
    fig.suptitle(f"{title} — {run_name}", fontsize=13, fontweight="bold")
    fig.text(0.99, 0.01, note.strip(), ha="right", va="bottom", fontsize=8, color="0.4")
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(path)


def _draw_lines(plt, chart: Chart, series: Series, run_name: str, path: Path) -> list[str] | None:
    panels = [(p, [(ln, k) for ln in p.lines if (k := _pick(series, ln.keys))]) for p in chart.panels]
    if not any(lines for _, lines in panels):
        return None
    panels = [(p, lines) for p, lines in panels if lines]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    used = []
    for ax, (panel, lines) in zip(axes[0], panels, strict=True):
        # a series identical to another one in the panel (reward == score without shaping) would hide it:
        # draw it once and name both
        drawn: list[tuple[list, list[str]]] = []
        for line, key in lines:
            same = next((d for d in drawn if d[0] == series[key]), None)
            if same is not None:
                same[1].append(line.label)
            else:
                drawn.append((series[key], [line.label]))
            used.append(key)
        for i, (points, labels) in enumerate(drawn):
            steps, values = zip(*points, strict=True)
            _plot_smoothed(ax, steps, values, " = ".join(labels), f"C{i}")
        ax.set_ylabel(panel.ylabel)
        if panel.title:
            ax.set_title(panel.title)
    _finish(fig, axes[0], chart.title, run_name, path)
    plt.close(fig)
    return used


def _draw_val(plt, chart: Chart, series: Series, run_name: str, path: Path) -> list[str] | None:
    keys = val_keys(series)
    if not keys:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, key in enumerate(keys):
        m = VAL_KEY.match(key)
        steps, values = zip(*series[key], strict=True)
        values = [100 * v for v in values]
        label = f"{m['source']} {m['stat']}"
        # validation points are sparse: markers on the raw values, no smoothing
        ax.plot(steps, values, color=f"C{i}", marker="o", linewidth=1.8, label=label)
    ax.set_ylabel(chart.panels[0].ylabel)
    ax.set_ylim(0, 105)
    _finish(fig, [ax], chart.title, run_name, path, smoothed=False)
    plt.close(fig)
    return keys


def _draw_time(plt, chart: Chart, series: Series, run_name: str, path: Path) -> list[str] | None:
    step_key = "timing_s/step"
    if not series.get(step_key) and not series.get("timing_s/gen"):
        return None
    total = dict(series.get(step_key, []))
    gen = dict(series.get("timing_s/gen", []))
    upd = dict(series.get("timing_s/update_actor", []))
    steps = sorted(set(total) | set(gen) | set(upd))
    g = [gen.get(s, 0.0) for s in steps]
    u = [upd.get(s, 0.0) for s in steps]
    other = [max(0.0, total.get(s, gen.get(s, 0.0) + upd.get(s, 0.0)) - gen.get(s, 0.0) - upd.get(s, 0.0))
             for s in steps]
    w = ema_weight(len(steps)) if len(steps) > 2 else 0.0
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.stackplot(steps, ema(g, w), ema(u, w), ema(other, w), labels=["generation", "policy update", "other"],
                 colors=["C0", "C1", "C7"], alpha=0.75)
    raw_total = [a + b + c for a, b, c in zip(g, u, other, strict=True)]
    ax.plot(steps, raw_total, color="black", alpha=0.25, linewidth=1.0, label="step total (raw)")
    ax.set_ylabel(chart.panels[0].ylabel)
    ax.set_ylim(0, 1.3 * max(raw_total + [1e-9]))  # headroom for the legend above the stack
    ax.legend(loc="upper center", ncol=4)
    _finish(fig, [ax], chart.title, run_name, path)
    plt.close(fig)
    return [k for k in (step_key, "timing_s/gen", "timing_s/update_actor") if series.get(k)]


def _draw_eval(plt, chart: Chart, evals: list[dict], run_name: str, path: Path) -> list[str] | None:
    points = [e for e in evals if e["_step"] is not None and "metrics" in e]
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    benches = sorted({e["benchmark"] for e in points})
    for i, bench in enumerate(benches):
        rows = sorted((e for e in points if e["benchmark"] == bench), key=lambda e: e["_step"])
        n = rows[-1]["metrics"]["n"]
        steps = [e["_step"] for e in rows]
        acc = [100 * e["accuracy"] for e in rows]
        se = [100 * e["metrics"].get(f"avg@{e['metrics']['n']}_stderr", 0.0) for e in rows]
        ax.errorbar(steps, acc, yerr=se, color=f"C{i}", marker="o", capsize=3, linewidth=1.8,
                    label=f"{bench} avg@{n} (± stderr)")
        kmax = max(rows[-1]["settings"]["k"])
        if kmax > 1:
            ax.plot(steps, [100 * e["metrics"].get(f"pass@{kmax}", float("nan")) for e in rows], color=f"C{i}",
                    linestyle="--", marker="^", alpha=0.7, label=f"{bench} pass@{kmax}")
    ax.set_ylabel(chart.panels[0].ylabel)
    ax.set_ylim(0, 105)
    _finish(fig, [ax], chart.title, run_name, path, smoothed=False)
    plt.close(fig)
    return [f"eval/{b}" for b in benches]


# ------------------------------------------------------------------ summary


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


def _fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.1f}"
    if abs(v) >= 0.01:
        return f"{v:.4f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def final_rows(series: Series) -> list[dict[str, Any]]:
    """One row per headline metric: final value and step, mean over the last 10% of steps, min, max."""
    rows = []
    wanted = list(SUMMARY_METRICS) + [
        (f"validation accuracy, {m['source']} {m['stat']} ({k})", k) for k in val_keys(series) if (m := VAL_KEY.match(k))
    ]
    for label, key in wanted:
        pts = series.get(key)
        if not pts:
            continue
        values = [v for _, v in pts]
        tail = values[-max(1, len(values) // 10):]
        rows.append({"metric": label, "key": key, "final": values[-1], "final_step": pts[-1][0],
                     "last10pct_mean": sum(tail) / len(tail), "min": min(values), "max": max(values),
                     "points": len(values)})
    return rows


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
        })
    return rows


def _config_line(run: Path) -> str:
    cfg = run / "config.yaml"
    if not cfg.is_file():
        return ""
    try:
        import yaml

        data = yaml.safe_load(cfg.read_text(encoding="utf-8")) or {}
    except Exception:
        return ""
    parts = []
    if data.get("name"):
        parts.append(f"preset `{data['name']}`")
    if (data.get("model") or {}).get("path"):
        parts.append(f"model `{data['model']['path']}`")
    if (data.get("trainer") or {}).get("engine"):
        parts.append(f"engine `{data['trainer']['engine']}`")
    return ", ".join(parts)


def write_summary(run: Path, out: Path, series: Series, evals: list[dict], charts: list[tuple[str, str]],
                  missing: list[str]) -> str:
    lines = [f"# Run report: {run.name}", ""]
    cfg = _config_line(run)
    if cfg:
        lines += [cfg, ""]
    steps = sorted({s for pts in series.values() for s, _ in pts})
    if steps:
        lines += [f"Steps logged: {steps[0]}–{steps[-1]} ({len(steps)} steps), from `{run / 'metrics.jsonl'}`.", ""]
    rows = final_rows(series)
    if rows:
        lines += ["## Final numbers", "",
                  "| metric | final | at step | mean of last 10% | min | max |",
                  "|---|---:|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['metric']} | {_fmt(r['final'])} | {r['final_step']} | {_fmt(r['last10pct_mean'])} | "
                         f"{_fmt(r['min'])} | {_fmt(r['max'])} |")
        lines.append("")
    ev = eval_rows(evals)
    if ev:
        ks = sorted({k for r in ev for k in r["pass"]})
        head = ["benchmark", "step", "n", "avg@n ± stderr"] + [f"pass@{k}" for k in ks] + [f"maj@{k}" for k in ks]
        head += ["extracted", "truncated", "mean tokens", "sampling"]
        lines += ["## Evaluations", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in ev:
            pct = lambda v: "–" if v is None else f"{100 * v:.1f}%"  # noqa: E731
            cells = [str(r["benchmark"]), str(r["step"]), str(r["n"]),
                     f"{pct(r['avg'])} ± {100 * (r['stderr'] or 0):.1f}"]
            cells += [pct(r["pass"].get(k)) for k in ks] + [pct(r["maj"].get(k)) for k in ks]
            cells += [pct(r["extraction_rate"]), pct(r["truncation_rate"]), _fmt(r["length_mean"]),
                      f"T={r['temperature']}, top_p={r['top_p']}, max {r['max_tokens']} tok"]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "pass@k is the unbiased estimator 1 - C(n-c,k)/C(n,k); maj@k votes within blocks of k samples "
                  "(see results.json `definitions`).", ""]
    if charts:
        lines += ["## Charts", ""]
        for title, file in charts:
            lines += [f"### {title}", "", f"![{title}]({file})", ""]
    if missing:
        lines += ["## Not charted", "", "No data logged for: " + ", ".join(missing) + ".", ""]
    text = "\n".join(lines)
    from gspo_cli.fsutil import atomic_write_text

    atomic_write_text(out / "summary.md", text)
    return text


def make_report(run: Path, out: Path | None = None) -> dict[str, Any]:
    """Draw every chart that has data and write summary.md; returns {out, charts, summary, missing, final}."""
    run = Path(run)
    series = read_series(run / "metrics.jsonl")
    evals = read_evals(run)
    if not series and not evals:
        raise DataError(f"{run} has no metrics.jsonl data and no eval results",
                        "is this a run folder? train first (metrics are appended every step)")
    out = Path(out) if out else run / "report"
    out.mkdir(parents=True, exist_ok=True)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _style(plt)
    drawers = {"lines": _draw_lines, "val": _draw_val, "time": _draw_time}
    charts, missing = [], []
    for chart in CHARTS:
        path = out / f"{chart.name}.png"
        tmp = out / f".{chart.name}.tmp.png"  # drawn beside, renamed when complete
        try:
            if chart.kind == "eval":
                used = _draw_eval(plt, chart, evals, run.name, tmp)
            else:
                used = drawers[chart.kind](plt, chart, series, run.name, tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)  # no half-drawn leftovers beside the report
            plt.close("all")
            raise
        if used is None:
            missing.append(chart.title.lower())
            path.unlink(missing_ok=True)  # a chart from an older report must not outlive its data
            continue
        os.replace(tmp, path)
        charts.append((chart.title, path.name))
    write_summary(run, out, series, evals, charts, missing)
    return {"run": str(run), "out": str(out), "charts": [str(out / f) for _, f in charts],
            "summary": str(out / "summary.md"), "missing": missing, "final": final_rows(series),
            "evals": eval_rows(evals)}

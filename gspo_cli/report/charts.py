"""The report's charts: what each one shows (`CHARTS`) and how it is drawn for one run or several overlaid.

One run: one colour per metric, raw values faint and an EMA-smoothed line on top. Several runs: one colour
per run (the legend names each run and the settings in which they differ, below the plot), the headline
metric of each panel only, so six runs stay readable. Health events (`health.jsonl`) are marked as vertical
lines. matplotlib (Agg) is passed in by the caller: importing this module does not import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gspo_cli.metrics.names import VAL_KEY, val_keys
from gspo_cli.report.data import RunData, more_settings_note

FIG_W, FIG_H = 7.5, 4.4
SEVERITY_COLOR = {"error": "#d62728", "warn": "#ff7f0e", "info": "#7f7f7f"}


@dataclass(frozen=True)
class Line:
    label: str
    keys: tuple[str, ...]  # first key present is used (engines name a few metrics differently)
    primary: bool = True  # drawn when runs are compared


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
    zero_note: str = ""  # shown on a panel whose values are all 0
    optional: bool = False  # a run without its metrics is not listed as "not charted" (e.g. MoE-only charts)


ON_POLICY_NOTE = ("all 0, as expected: one on-policy update per batch (one mini-batch, ppo_epochs=1)\n"
                  "keeps the policy ratio at 1, so nothing is clipped and KL(old -> new) is 0")

CHARTS: tuple[Chart, ...] = (
    Chart("reward", "Training reward", (Panel("mean reward per response", (
        Line("score (verifier)", ("critic/score/mean",)),
        Line("reward (after shaping)", ("critic/rewards/mean",), primary=False),
    )),)),
    Chart("val_accuracy", "Validation accuracy", (Panel("accuracy (%)", ()),), kind="val"),
    Chart("response_length", "Response length", (Panel("tokens", (
        Line("mean", ("response_length/mean",)),
        Line("max", ("response_length/max",), primary=False),
    )),)),
    Chart("clipfrac_kl", "GSPO clipping and policy drift", (
        Panel("fraction clipped", (Line("pg_clipfrac (tokens)", ("actor/pg_clipfrac",)),
                                   Line("clipped sequences", ("actor/pg_clipfrac_seq", "actor/seq_clipfrac"),
                                        primary=False)), "pg_clipfrac"),
        Panel("approx. KL (nats)", (Line("ppo_kl", ("actor/ppo_kl",)),), "ppo_kl (old -> new policy)"),
    ), zero_note=ON_POLICY_NOTE),
    # MoE policies only (no panel has data on a dense run, so the chart is not drawn): docs/health.md "MoE routing
    # metrics". The load panel reads verl's rollout/moe/* too (rollout.moe_load_balance_metrics_interval).
    Chart("routing", "MoE routing", (
        Panel("fraction of routed experts", (
            Line("rollout policy -> policy trained", ("moe/routing_flip_frac",)),
            Line("across one update", ("moe/routing_flip_frac_update",)),
            Line("worst mini-batch", ("moe/routing_flip_frac_max",), primary=False)), "experts flipped"),
        Panel("share of the log-prob gap", (
            Line("tokens", ("moe/router_gap_share",)),
            Line("sequences (GSPO ratio)", ("moe/router_seq_gap_share",), primary=False)), "the router's share"),
        Panel("load imbalance", (
            Line("max/mean - 1 (verl max_vio, mean over layers)", ("rollout/moe/max_vio/avg",)),
            Line("CV of tokens per expert", ("moe/load_cv",), primary=False)), "expert load"),
    ), optional=True),
    Chart("grad_norm", "Gradient norm", (Panel("L2 norm (before clipping)", (
        Line("grad_norm", ("actor/grad_norm",)),)),)),
    Chart("step_time", "Time per training step", (Panel("seconds per step", ()),), kind="time"),
    Chart("eval_accuracy", "Eval accuracy per checkpoint", (Panel("accuracy (%)", ()),), kind="eval"),
)


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


# ------------------------------------------------------------------ shared drawing pieces


def style(plt) -> None:
    plt.rcParams.update({
        "figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
        "axes.spines.right": False, "axes.titlesize": 12, "axes.labelsize": 10, "legend.fontsize": 9,
        "legend.frameon": False,
    })


def _pick(series, keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if series.get(k)), None)


def plot_smoothed(ax, steps, values, label, color, linestyle="-"):
    ax.plot(steps, values, color=color, alpha=0.2, linewidth=1.0, linestyle=linestyle)
    if len(values) > 2:
        ax.plot(steps, ema(list(values), ema_weight(len(values))), color=color, linewidth=2.0, label=label,
                linestyle=linestyle)
    else:
        ax.plot(steps, values, color=color, linewidth=2.0, marker="o", label=label, linestyle=linestyle)


def mark_health(ax, runs: list[RunData]) -> None:
    """A thin vertical line per health event (one per step and severity), named once in the legend."""
    seen, named = set(), set()
    for run in runs:
        for ev in run.health:
            sev = ev.get("severity") if ev.get("severity") in SEVERITY_COLOR else "warn"
            if (ev["step"], sev) in seen:
                continue
            seen.add((ev["step"], sev))
            label = None if sev in named else f"health {sev} ({ev.get('rule', '?')}...)"
            named.add(sev)
            ax.axvline(ev["step"], color=SEVERITY_COLOR[sev], linestyle=":", linewidth=1.2, alpha=0.8, label=label)


def finish(fig, axes, title: str, runs: list[RunData], path: Path, smoothed: bool = True) -> None:
    """Axis labels, legend (below the plot when comparing), title naming the run(s), tight layout, save."""
    from matplotlib.ticker import MaxNLocator

    compare = len(runs) > 1
    for ax in axes:
        ax.set_xlabel("training step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole: no tick at 1.5 on a 4-step run
        if not compare and ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best")
    bottom = 0.03
    if compare:
        handles, labels = {}, []
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in handles:
                    handles[lab] = h
                    labels.append(lab)
        ncol = 1 if max((len(x) for x in labels), default=0) > 40 else 2
        lines = sum(max(lab.count("\n") + 1 for lab in labels[i:i + ncol]) for i in range(0, len(labels), ncol))
        fig.legend([handles[x] for x in labels], labels, loc="lower left", ncol=ncol, fontsize=8.5,
                   bbox_to_anchor=(0.01, 0.0), frameon=False)
        bottom = min(0.55, 0.04 + 0.2 * lines / fig.get_figheight())
        if (note := more_settings_note(runs)) is not None:
            fig.text(0.01, 0.003, note, ha="left", va="bottom", fontsize=8, color="0.4")
    name = runs[0].name if not compare else f"{len(runs)} runs"
    fig.suptitle(f"{title} — {name}", fontsize=13, fontweight="bold", y=0.985)
    if smoothed:
        fig.text(0.99, 0.935, "faint: raw, bold: EMA-smoothed", ha="right", va="top", fontsize=8, color="0.4")
    fig.tight_layout(rect=(0, bottom, 1, 0.93))
    fig.savefig(path)


def _fig(plt, runs: list[RunData], panels: int = 1):
    """A figure with room under the axes for a compare legend (one row per ~2 runs)."""
    extra = 0.0 if len(runs) == 1 else 0.2 * sum(r.label.count("\n") + 1 for r in runs) + 0.3
    return plt.subplots(1, panels, figsize=(FIG_W * (0.85 if panels > 1 else 1) * panels, FIG_H + extra),
                        squeeze=False)


# ------------------------------------------------------------------ the four kinds of chart


def _panel_lines(chart: Chart, runs: list[RunData]):
    """[(panel, [(run index, line, key)])] for the panels that have data in any run."""
    compare = len(runs) > 1
    found = []
    for panel in chart.panels:
        lines = [(i, ln, k) for i, run in enumerate(runs) for ln in panel.lines
                 if (ln.primary or not compare) and (k := _pick(run.series, ln.keys))]
        if lines:
            found.append((panel, lines))
    return found


def draw_lines(plt, chart: Chart, runs: list[RunData], path: Path) -> list[str] | None:
    panels = _panel_lines(chart, runs)
    if not panels:
        return None
    compare = len(runs) > 1
    fig, axes = _fig(plt, runs, len(panels))
    used = []
    for ax, (panel, lines) in zip(axes[0], panels, strict=True):
        # one run: a series identical to another one in the panel (reward == score without shaping) would hide
        # it: draw it once and name both
        drawn: list[tuple[int, list, list[str], int]] = []
        for i, line, key in lines:
            same = next((d for d in drawn if d[0] == i and d[1] == runs[i].series[key]), None)
            if same is not None and not compare:
                same[2].append(line.label)
            else:
                drawn.append((i, runs[i].series[key], [line.label], panel.lines.index(line)))
            used.append(key)
        for j, (i, points, labels, li) in enumerate(drawn):
            steps, values = zip(*points, strict=True)
            label = runs[i].label if compare else " = ".join(labels)
            plot_smoothed(ax, steps, values, label, f"C{i if compare else j}", ("-", "--", ":")[li % 3])
        if chart.zero_note and all(v == 0 for _, pts, _, _ in drawn for _, v in pts):
            ax.text(0.5, 0.8, chart.zero_note, transform=ax.transAxes, ha="center", va="center", fontsize=8,
                    color="0.25", bbox={"boxstyle": "round", "fc": "#f4f4f4", "ec": "0.8"})
        mark_health(ax, runs)
        ax.set_ylabel(panel.ylabel)
        if panel.title:
            ax.set_title(panel.title)
    finish(fig, axes[0], chart.title, runs, path)
    plt.close(fig)
    return sorted(set(used))


def draw_val(plt, chart: Chart, runs: list[RunData], path: Path) -> list[str] | None:
    keys = sorted({k for run in runs for k in val_keys(run.series)})
    if not keys:
        return None
    compare = len(runs) > 1
    fig, axes = _fig(plt, runs)
    ax = axes[0][0]
    for i, run in enumerate(runs):
        for j, key in enumerate(k for k in keys if run.series.get(k)):
            m = VAL_KEY.match(key)
            steps, values = zip(*run.series[key], strict=True)
            label = f"{run.label}: {m['source']}" if compare and len(keys) > 1 else (
                run.label if compare else f"{m['source']} {m['stat']}")
            # validation points are sparse: markers on the raw values, no smoothing
            ax.plot(steps, [100 * v for v in values], color=f"C{i if compare else j}", marker="o", linewidth=1.8,
                    markersize=4, label=label, linestyle=("-", "--", ":")[j % 3] if compare else "-")
    mark_health(ax, runs)
    ax.set_ylabel(chart.panels[0].ylabel)
    ax.set_ylim(0, 105)
    finish(fig, [ax], chart.title, runs, path, smoothed=False)
    plt.close(fig)
    return keys


def _time_parts(series) -> tuple[list[int], list[float], list[float], list[float]]:
    total = dict(series.get("timing_s/step", []))
    gen = dict(series.get("timing_s/gen", []))
    upd = dict(series.get("timing_s/update_actor", []))
    steps = sorted(set(total) | set(gen) | set(upd))
    g = [gen.get(s, 0.0) for s in steps]
    u = [upd.get(s, 0.0) for s in steps]
    other = [max(0.0, total.get(s, gen.get(s, 0.0) + upd.get(s, 0.0)) - a - b) for s, a, b in zip(steps, g, u,
                                                                                                  strict=True)]
    return steps, g, u, other


def draw_time(plt, chart: Chart, runs: list[RunData], path: Path) -> list[str] | None:
    timed = [(i, run) for i, run in enumerate(runs) if run.series.get("timing_s/step") or run.series.get("timing_s/gen")]
    if not timed:
        return None
    fig, axes = _fig(plt, runs)
    ax = axes[0][0]
    if len(runs) == 1:
        steps, g, u, other = _time_parts(runs[0].series)
        w = ema_weight(len(steps)) if len(steps) > 2 else 0.0
        ax.stackplot(steps, ema(g, w), ema(u, w), ema(other, w), labels=["generation", "policy update", "other"],
                     colors=["C0", "C1", "C7"], alpha=0.75)
        raw_total = [a + b + c for a, b, c in zip(g, u, other, strict=True)]
        ax.plot(steps, raw_total, color="black", alpha=0.25, linewidth=1.0, label="step total (raw)")
        ax.set_ylim(0, 1.3 * max(raw_total + [1e-9]))  # headroom for the legend above the stack
        ax.legend(loc="upper center", ncol=4)
    else:
        for i, run in timed:
            steps, g, u, other = _time_parts(run.series)
            plot_smoothed(ax, steps, [a + b + c for a, b, c in zip(g, u, other, strict=True)], run.label, f"C{i}")
        ax.set_ylim(bottom=0)
    mark_health(ax, runs)
    ax.set_ylabel(chart.panels[0].ylabel)
    finish(fig, [ax], chart.title, runs, path)
    plt.close(fig)
    keys = ("timing_s/step", "timing_s/gen", "timing_s/update_actor")
    return [k for k in keys if any(run.series.get(k) for _, run in timed)]


def _eval_points(run: RunData) -> list[dict]:
    return [e for e in run.evals if e["_step"] is not None and "metrics" in e]


def draw_eval(plt, chart: Chart, runs: list[RunData], path: Path) -> list[str] | None:
    """Accuracy per checkpoint step (avg@n ± stderr), per benchmark; pass@k dashed for a single run."""
    benches = sorted({e["benchmark"] for run in runs for e in _eval_points(run)})
    if not benches:
        return None
    compare = len(runs) > 1
    fig, axes = _fig(plt, runs)
    ax = axes[0][0]
    for i, run in enumerate(runs):
        for j, bench in enumerate(benches):
            rows = sorted((e for e in _eval_points(run) if e["benchmark"] == bench), key=lambda e: e["_step"])
            if not rows:
                continue
            n = rows[-1]["metrics"]["n"]
            steps = [e["_step"] for e in rows]
            acc = [100 * e["accuracy"] for e in rows]
            se = [100 * e["metrics"].get(f"avg@{e['metrics']['n']}_stderr", 0.0) for e in rows]
            color = f"C{i if compare else j}"
            label = (run.label if len(benches) == 1 else f"{run.label}: {bench}") if compare else (
                f"{bench} avg@{n} (± stderr)")
            ax.errorbar(steps, acc, yerr=se, color=color, marker="o", capsize=3, linewidth=1.8, label=label,
                        linestyle=("-", "--", ":")[j % 3])
            kmax = max(rows[-1].get("settings", {}).get("k") or [1])
            if kmax > 1 and not compare:
                ax.plot(steps, [100 * e["metrics"].get(f"pass@{kmax}", float("nan")) for e in rows], color=color,
                        linestyle="--", marker="^", alpha=0.7, label=f"{bench} pass@{kmax}")
    ax.set_ylabel(chart.panels[0].ylabel + (f", {benches[0]} avg@n ± stderr" if compare and len(benches) == 1
                                            else ""))
    ax.set_ylim(0, 105)
    finish(fig, [ax], chart.title, runs, path, smoothed=False)
    plt.close(fig)
    return [f"eval/{b}" for b in benches]


DRAWERS = {"lines": draw_lines, "val": draw_val, "time": draw_time, "eval": draw_eval}

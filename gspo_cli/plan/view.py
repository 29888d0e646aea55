"""How `gspo plan` prints (plan/flow.py's `Planned`; with --json its `as_dict()`): the predicted step per phase,
throughput and bottleneck, the layouts preflight accepts and verl's async modes; the recommendation
(plan/recommend.py): the best layout without a preflight warning, its ties, the faster ones that warn (not
recommended, with their warnings), the whole run's time and the next command; or a calibration against a run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from gspo_cli.console import out
from gspo_cli.plan import recommend, run_time

if TYPE_CHECKING:
    from gspo_cli.plan.flow import Planned


def render(planned: Planned) -> None:
    if planned.calibration:
        _render_calibration(planned.result, planned.written)
    else:
        _render_plan(planned.result, planned.written)


def _speed(lay: Any) -> str:
    return f"{lay.prediction.tokens_per_device_per_s:,.1f} tokens/device/s"


def render_recommendation(result: Any, console: Any) -> None:
    rec = result.recommendation
    if rec is None:
        return
    for lay in rec.warned:  # faster by the model, but preflight warns: shown, never the recommendation
        console.print(f"[yellow]Not recommended[/] ({lay.mode}): {_speed(lay)} = {result.vs_preset(lay):.2f}x the "
                      f"preset's, but preflight warns: {escape('; '.join(recommend.new_warnings(lay, rec.own)))}",
                      soft_wrap=True)
    best = rec.best
    if best is None:
        return
    if rec.all_warn:
        console.print("[yellow]Every layout listed adds a preflight warning:[/] the fastest follows, its warnings "
                      "as its risks (--top N lists more)", soft_wrap=True)
    sets = " ".join(f"--set {x}" for x in best.sets) or "(the preset as given)"
    console.print(f"[bold]Best[/] ({best.mode}): {_speed(best)} = {result.vs_preset(best):.2f}x the preset's "
                  f"{result.prediction.tokens_per_device_per_s:,.1f}; preflight {best.verdict.status} (memory: "
                  f"{escape(best.verdict.memory)}): {escape(sets)}", soft_wrap=True)
    if rec.ties:
        console.print(f"  tied with it ({recommend.TIE_WHY}): " + ", ".join(
            f"{lay.mode} at {_speed(lay)} ({escape(' '.join(lay.sets)) or 'the preset as given'})"
            for lay in rec.ties), soft_wrap=True)
    for risk in result.risks(best) or ["none beyond the preset's own (on-policy, memory ok)"]:
        console.print(f"  [yellow]risk[/] {escape(risk)}", soft_wrap=True)
    if rec.run is not None:
        console.print(f"Whole run: {rec.run.describe()} ({run_time.NOT_MODELLED})", soft_wrap=True, highlight=False)
    else:
        console.print(f"Whole run: not known: {escape(rec.run_unknown)}", soft_wrap=True, highlight=False)
    console.print(f"Next: {escape(rec.command)} --dry-run", soft_wrap=True, highlight=False)


def _render_plan(result: Any, written: Path | None) -> None:
    w, pred, prof = result.workload, result.prediction, result.profile
    out.print(f"[bold]gspo plan[/] {result.preset.name}: {w.model.name} on {w.nodes} x {w.devices_per_node} "
              f"{escape(prof.label)}; {w.prompts} prompts x n {w.n}, prompt ~{w.prompt_mean:.0f} / response "
              f"~{w.response_mean:.0f} of {w.max_response} tokens ({escape(w.lengths.source)})", soft_wrap=True)
    table = Table(title="Predicted step (preset as given)")
    table.add_column("phase")
    table.add_column("seconds", justify="right")
    table.add_column("share", justify="right")
    for phase, sec in pred.phases.items():
        table.add_row(phase, f"{sec:,.2f}" if sec < 100 else f"{sec:,.0f}", f"{sec / pred.step_s:.0%}")
    table.add_row("[bold]step[/]", f"[bold]{pred.step_s:,.2f}[/]", "")
    out.print(table)
    out.print(f"Throughput: [bold]{pred.tokens_per_device_per_s:,.1f}[/] tokens/device/s "
              f"({pred.step_tokens:,.0f} tokens / {w.devices} devices / {pred.step_s:,.1f} s); "
              f"bottleneck: [bold]{pred.bottleneck}[/]; memory (preflight): {result.verdict.status} "
              f"({escape(result.verdict.memory)})", soft_wrap=True)
    if prof.caveat:
        out.print(f"[yellow]Profile {prof.name}:[/] {escape(prof.caveat)}", soft_wrap=True)
    _render_rollout_correction(result)
    if result.search:
        _render_layouts(result)
    if written:
        from gspo_cli.shell import command

        out.print(f"Wrote {written}: {command('gspo', 'train', '--preset', written, '--dry-run')}", markup=False)


def _render_rollout_correction(result: Any) -> None:
    """algorithm.rollout_correction as preflight judged it (engines/verl/traps.py): its problems as risk lines,
    else the setting itself."""
    risks = [p for p in result.verdict.problems if p.startswith("rollout correction")]
    for risk in risks:
        out.print(f"  [yellow]risk[/] {escape(risk)}", soft_wrap=True)
    section = result.preset.algorithm.rollout_correction
    if section is not None and not risks:
        out.print(f"  rollout correction: {escape(section.summary())}", soft_wrap=True)


def _render_layouts(result: Any) -> None:
    s, base = result.search, result.prediction.tokens_per_device_per_s
    table = Table(title=f"Layouts preflight accepts, fastest first ({s.evaluated} evaluated, {s.rejected} rejected "
                        f"by preflight, {result.search_s:.2f} s)")
    for col in ("#", "tokens/dev/s", "vs given", "step s", "bottleneck", "memory (preflight)"):
        table.add_column(col)
    for i, lay in enumerate(s.layouts, 1):
        speed = lay.prediction.tokens_per_device_per_s
        table.add_row(str(i), f"{speed:,.1f}", f"{speed / base:.2f}x" if base else "-",
                      f"{lay.prediction.step_s:,.0f}", escape(lay.prediction.bottleneck), lay.verdict.status)
    out.print(table)
    for i, lay in enumerate(s.layouts, 1):
        out.print(f"  #{i}: " + (escape(" ".join(f"--set {x}" for x in lay.sets)) or "(the preset as given)"),
                  highlight=False, soft_wrap=True)
    if s.rejected_by:
        out.print("[dim]rejected by: " + ", ".join(f"{k} {v}" for k, v in s.rejected_by.items()) + "[/]")
    if s.modes:
        _render_modes(result)
    render_recommendation(result, out)


def _render_modes(result: Any) -> None:
    s, base = result.search, result.search.layouts[0].prediction.step_s if result.search.layouts else 0.0
    table = Table(title="verl's async trainer modes on layout #1 (trainer.mode; risk: staleness under GSPO's clip)")
    for col in ("mode", "step s", "vs #1", "stale updates", "bottleneck", "preflight"):
        table.add_column(col)
    for lay in s.modes:
        p = lay.prediction
        table.add_row(lay.mode, f"{p.step_s:,.0f}", f"{base / p.step_s:.2f}x" if base else "-", str(p.staleness),
                      escape(p.bottleneck), lay.verdict.status)
    out.print(table)
    risks = {w for lay in s.modes for w in lay.verdict.problems if w.startswith("async")}
    for risk in sorted(risks):
        out.print(f"  [yellow]risk[/] {escape(risk)}", soft_wrap=True)


def _render_calibration(result: Any, saved: Path | None) -> None:
    table = Table(title=f"{result.run.name}: predicted vs measured (median of {result.steps} steps, "
                        f"profile {result.profile.name}, the run's own lengths)")
    for col in ("phase", "predicted s", "measured s", "error", "after fit s"):
        table.add_column(col, justify="right" if col != "phase" else "left")
    for r in result.rows:
        table.add_row(r["phase"], f"{r['predicted']:.4g}", f"{r['measured']:.4g}", f"{r['error_pct']:+.0f}%",
                      f"{r['after_fit']:.4g}")
    out.print(table)
    out.print("Fitted factors: " + ", ".join(f"{k}={v:.4g} (was {getattr(result.profile, k):.4g})"
                                             for k, v in result.fitted.items()))
    if saved:
        from gspo_cli.shell import command

        out.print(f"Saved profile {saved.stem} ({saved}): {command('gspo', 'plan', '--preset', 'P', '--profile', saved.stem)}",
                  markup=False)

"""How `gspo plan` prints its recommendation (plan/recommend.py): the best layout without a preflight warning, its
ties, the faster ones that warn (not recommended, with their warnings), the whole run's time and the next command."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from gspo_cli.plan import recommend, run_time


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

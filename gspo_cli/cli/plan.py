"""`gspo plan`: predicted step time and throughput of a preset, a faster layout, and calibration from a run."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def plan_command(
    preset: str = options.preset(),
    sets: list[str] | None = options.sets(),
    nodes: int = typer.Option(None, "--nodes", min=1, help="Plan for this many nodes instead of the preset's."),
    devices: int = typer.Option(None, "--devices", min=1, help="Devices per node instead of the preset's."),
    profile: str = typer.Option(None, "--profile", help="Device profile: a2, a3, h100, h200, cpu, or one saved with "
                                "--save-profile (default: the preset's cluster.profile)."),
    json_out: bool = options.json_out("Machine-readable output (step_s, phases, tokens_per_device_per_s, "
                                      "bottleneck, layouts, ...)."),
    write_preset: str = typer.Option(None, "--write-preset", metavar="NEW.yaml",
                                     help="Save the fastest accepted layout as a preset extending this one."),
    calibrate: str = typer.Option(None, "--calibrate", metavar="RUN", help="Compare the model with RUN's measured "
                                  "timing_s/* per phase and fit the profile factors to it."),
    save_profile: str = typer.Option(None, "--save-profile", metavar="NAME",
                                     help="With --calibrate: keep the fitted factors as profile NAME."),
    top: int = typer.Option(8, "--top", min=1, help="How many layouts to list."),
    search: bool = typer.Option(True, "--search/--no-search", help="Search faster layouts (default on)."),
) -> None:
    """Predict one training step of a preset before booking the cluster, and find faster layouts.

    Prints seconds per phase (verl's timing names), tokens per device per second and the bottleneck, then the \
layouts preflight accepts, fastest first, each with its memory verdict and the --set lines that produce it.

    The model is arithmetic on the device profile (HBM bandwidth, FLOPs, links) with efficiency factors fitted \
to published and measured runs; docs/plan.md has the calibration table and where the model is weak. \
Response lengths are an assumption until --calibrate RUN reads a real run's.
    """
    from gspo_cli.console import print_json

    if save_profile and not calibrate:
        from gspo_cli.errors import ConfigError

        raise ConfigError("--save-profile needs --calibrate RUN", "gspo plan --calibrate RUN --save-profile NAME")
    if calibrate:
        from gspo_cli.plan import feedback

        result = feedback.calibrate(calibrate, profile)
        saved = feedback.save(result, save_profile) if save_profile else None
        if json_out:
            print_json(result.to_json() | {"saved_profile": str(saved) if saved else None})
        else:
            _render_calibration(result, saved)
        return
    if not preset:
        from gspo_cli.errors import ConfigError

        raise ConfigError("no preset given", "pass --preset NAME (see `gspo presets list`) or --calibrate RUN")
    from gspo_cli.config.presets import load_preset
    from gspo_cli.engines.verl.preflight import evaluate  # the planner's verdicts are preflight's (plan/memory.py)
    from gspo_cli.plan import service

    result = service.plan(load_preset(preset, list(sets or [])), preflight=evaluate, profile=profile, nodes=nodes,
                          devices=devices, search=search or bool(write_preset), top=top, ref=preset,
                          sets=list(sets or []))
    written = service.write_preset(result, preset, write_preset) if write_preset else None
    if json_out:
        print_json(result.to_json() | {"written_preset": str(written) if written else None})
    else:
        _render_plan(result, written)


def _render_plan(result, written) -> None:
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import out

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


def _render_rollout_correction(result) -> None:
    """algorithm.rollout_correction as preflight judged it (engines/verl/traps.py): its problems as risk lines,
    else the setting itself."""
    from rich.markup import escape

    from gspo_cli.console import out

    risks = [p for p in result.verdict.problems if p.startswith("rollout correction")]
    for risk in risks:
        out.print(f"  [yellow]risk[/] {escape(risk)}", soft_wrap=True)
    section = result.preset.algorithm.rollout_correction
    if section is not None and not risks:
        out.print(f"  rollout correction: {escape(section.summary())}", soft_wrap=True)


def _render_layouts(result) -> None:
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import out

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
    from gspo_cli.plan.view import render_recommendation

    render_recommendation(result, out)


def _render_modes(result) -> None:
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import out

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


def _render_calibration(result, saved) -> None:
    from rich.table import Table

    from gspo_cli.console import out

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

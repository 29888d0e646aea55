"""`gspo report RUN [RUN ...]`: curves as PNG and a summary.md; several runs are overlaid and compared."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def report_command(
    runs: list[str] = typer.Argument(None, help="Run folders or names (default: `latest`); two or more are "
                                                "compared on shared charts."),
    out: str = typer.Option(None, "--out", "-o", help="Output folder (default: <run>/report, or "
                                                      "$GSPO_HOME/reports/compare-<runs>/ for several)."),
    preset: str = options.preset(help="Preset whose paths.runs_dir to look in."),
    json_out: bool = options.json_out("Print the report index as JSON."),
) -> None:
    """Draw training curves (reward, val accuracy, length, clipfrac/KL, grad norm, step time) and eval accuracy
    per checkpoint; with several runs, overlay them (legend: each run and the settings that differ) and put their
    numbers side by side in summary.md."""
    from gspo_cli import untrusted
    from gspo_cli.console import emit, err
    from gspo_cli.report import build as report
    from gspo_cli.report import view
    from gspo_cli.runs import flow as runs_flow

    paths = runs_flow.resolve_all(runs, preset)
    result = report.make_report(paths, out)
    untrusted.print_skipped(err)  # a bad file of a run costs one line
    emit(json_out, result, view.render, result, len(paths) > 1)

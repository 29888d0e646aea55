"""`gspo report RUN`: curves as PNG and a summary.md with the final numbers."""

from __future__ import annotations

import typer


def report_command(
    run: str = typer.Argument("latest", help="Run folder, run name, or `latest`."),
    out: str = typer.Option(None, "--out", "-o", help="Output folder (default: <run>/report)."),
    preset: str = typer.Option(None, "--preset", "-p", help="Preset whose paths.runs_dir to look in."),
    json_out: bool = typer.Option(False, "--json", help="Print the report index as JSON."),
) -> None:
    """Draw training curves (reward, val accuracy, length, clipfrac/KL, grad norm, step time) and eval results."""
    from gspo_cli.report import build as report

    loaded = None
    if preset:
        from gspo_cli.config.presets import load_preset

        loaded = load_preset(preset)
    result = report.make_report(report.resolve_run(run, loaded), out)
    if json_out:
        from gspo_cli.console import print_json

        print_json(result)
        return
    from rich.table import Table

    from gspo_cli.console import err
    from gspo_cli.console import out as stdout

    table = Table(title=f"{result['run']}", title_justify="left")
    for col in ("metric", "final", "at step", "last 10% mean"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in result["final"]:
        table.add_row(row["metric"], report._fmt(row["final"]), str(row["final_step"]),
                      report._fmt(row["last10pct_mean"]))
    for ev in result["evals"]:
        avg = "–" if ev["avg"] is None else f"{100 * ev['avg']:.1f}%"
        table.add_row(f"eval {ev['benchmark']} avg@{ev['n']}", avg, str(ev["step"]), "")
    stdout.print(table)
    for path in result["charts"]:
        err.print(f"chart: {path}", highlight=False)
    if result["missing"]:
        err.print(f"not logged, not charted: {', '.join(result['missing'])}", highlight=False)
    err.print(f"summary: {result['summary']}", highlight=False)

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
    from gspo_cli.report import build as report
    from gspo_cli.runs.refs import resolve_run

    loaded = None
    if preset:
        from gspo_cli.config.presets import load_preset

        loaded = load_preset(preset)
    paths = [resolve_run(r, loaded) for r in (runs or ["latest"])]
    result = report.make_report(paths, out)
    from gspo_cli import untrusted
    from gspo_cli.console import err

    untrusted.print_skipped(err)  # a bad file of a run costs one line
    if json_out:
        from gspo_cli.console import print_json

        print_json(result)
        return
    result = untrusted.clean_tree(result)  # names and values from run folders: no escape sequences printed
    if len(paths) == 1:
        _render_one(result)
    else:
        _render_compare(result)
    from rich.markup import escape

    for warning in result["warnings"]:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    for path in result["charts"]:
        err.print(f"chart: {path}", highlight=False)
    if result["missing"]:
        err.print(f"not logged, not charted: {', '.join(result['missing'])}", highlight=False)
    err.print(f"summary: {result['summary']}", highlight=False)


def _render_one(result: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import out
    from gspo_cli.report.summary import cell, pct

    table = Table(title=escape(f"{result['run']}"), title_justify="left")
    for col in ("metric", "final", "at step", "last 10% mean"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in result["final"]:
        table.add_row(escape(str(row["metric"])), cell(row, "final"), str(row["final_step"]), cell(row, "last10pct_mean"))
    for ev in result["evals"]:
        table.add_row(escape(f"eval {ev['benchmark']} avg@{ev['n']}"), pct(ev["avg"]), str(ev["step"]), "")
    out.print(table)


def _render_compare(result: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import out

    names = [p.rstrip("/").rsplit("/", 1)[-1] for p in result["runs"]]
    table = Table(title=f"{len(names)} runs compared", title_justify="left")
    table.add_column("")
    for name in names:
        table.add_column(escape(name), justify="right", overflow="fold")
    for label, cells in result["table"].items():
        table.add_row(escape(label.strip("`")), *[escape(str(cells[n])) for n in names])
    out.print(table)

"""How `gspo report` prints (with --json: the report index as make_report returns it): one run's final values and
evals, or several runs side by side; then the warnings, the charts, what was not logged and the summary file."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from gspo_cli import untrusted
from gspo_cli.console import err, out
from gspo_cli.report.summary import cell, pct


def render(result: dict[str, Any], several: bool) -> None:
    result = untrusted.clean_tree(result)  # names and values from run folders: no escape sequences printed
    if several:
        _render_compare(result)
    else:
        _render_one(result)
    for warning in result["warnings"]:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    for path in result["charts"]:
        err.print(f"chart: {path}", highlight=False)
    if result["missing"]:
        err.print(f"not logged, not charted: {', '.join(result['missing'])}", highlight=False)
    err.print(f"summary: {result['summary']}", highlight=False)


def _render_one(result: dict[str, Any]) -> None:
    table = Table(title=escape(f"{result['run']}"), title_justify="left")
    for col in ("metric", "final", "at step", "last 10% mean"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in result["final"]:
        table.add_row(escape(str(row["metric"])), cell(row, "final"), str(row["final_step"]), cell(row, "last10pct_mean"))
    for ev in result["evals"]:
        table.add_row(escape(f"eval {ev['benchmark']} avg@{ev['n']}"), pct(ev["avg"]), str(ev["step"]), "")
    out.print(table)


def _render_compare(result: dict[str, Any]) -> None:
    names = [p.rstrip("/").rsplit("/", 1)[-1] for p in result["runs"]]
    table = Table(title=f"{len(names)} runs compared", title_justify="left")
    table.add_column("")
    for name in names:
        table.add_column(escape(name), justify="right", overflow="fold")
    for label, cells in result["table"].items():
        table.add_row(escape(label.strip("`")), *[escape(str(cells[n])) for n in names])
    out.print(table)

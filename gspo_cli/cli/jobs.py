"""`gspo jobs list | status | logs | stop`: the Ray jobs gspo submitted (or any job on the cluster)."""

from __future__ import annotations

import typer

from gspo_cli.cli import options

app = typer.Typer(help="List, inspect, follow and stop Ray jobs.", no_args_is_help=True)


@app.command("list")
def list_cmd(address: str | None = options.address(), json_out: bool = options.json_out()) -> None:
    """List jobs, newest first."""
    from gspo_cli.jobs import client as jobs

    rows = jobs.list_jobs(address)
    if json_out:
        from gspo_cli.console import print_json

        print_json(rows)
        return
    from rich.table import Table

    from gspo_cli.console import out

    table = Table(title="Ray jobs", title_justify="left")
    for col in ("job id", "status", "command", "preset", "started", "ended"):
        table.add_column(col, no_wrap=col in ("job id", "status"))
    for row in rows:
        meta = row["metadata"]
        table.add_row(row["job_id"], _status_style(row["status"]), meta.get("command", "-"), meta.get("preset", "-"),
                      row["start_time"] or "-", row["end_time"] or "-")
    out.print(table)


def _status_style(status: str) -> str:
    color = {"SUCCEEDED": "green", "FAILED": "red", "STOPPED": "yellow", "RUNNING": "cyan"}.get(status, "white")
    return f"[{color}]{status}[/]"


@app.command("status")
def status_cmd(job_id: str = typer.Argument(..., help="Submission id."),
               address: str | None = options.address(), json_out: bool = options.json_out()) -> None:
    """Show one job's status, entrypoint and exit code."""
    from gspo_cli.jobs import client as jobs

    row = jobs.job_status(job_id, address)
    if json_out:
        from gspo_cli.console import print_json

        print_json(row)
        return
    from gspo_cli.console import out

    for key in ("job_id", "status", "entrypoint", "start_time", "end_time", "exit_code", "message"):
        value = _status_style(row[key]) if key == "status" else row[key]
        out.print(f"[bold]{key:>11}[/]  {value if value not in (None, '') else '-'}", highlight=False)


@app.command("logs")
def logs_cmd(
    job_id: str = typer.Argument(..., help="Submission id."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Stream until the job ends (Ctrl-C detaches)."),
    address: str | None = options.address(),
    json_out: bool = options.json_out("With --follow: print the job's result as JSON at the end."),
) -> None:
    """Print a job's logs, or follow them live with progress."""
    from gspo_cli.jobs import client as jobs

    if follow:
        raise typer.Exit(jobs.follow_existing(job_id, address, json_out=json_out))
    import sys

    sys.stdout.write(jobs.job_logs(job_id, address))


@app.command("stop")
def stop_cmd(job_id: str = typer.Argument(..., help="Submission id."),
             address: str | None = options.address(), json_out: bool = options.json_out()) -> None:
    """Stop a running job and wait until Ray reports it stopped."""
    from gspo_cli.jobs import client as jobs

    row = jobs.stop_job(job_id, address)
    if json_out:
        from gspo_cli.console import print_json

        print_json(row)
        return
    from gspo_cli.console import err

    err.print(f"Job {job_id}: {_status_style(row['status'])}")

"""`gspo jobs list | status | logs | stop`: the Ray jobs gspo submitted (or any job on the cluster)."""

from __future__ import annotations

import typer

from gspo_cli.cli import options

app = typer.Typer(help="List, inspect, follow and stop Ray jobs.", no_args_is_help=True)


@app.command("list")
def list_cmd(address: str | None = options.address(), json_out: bool = options.json_out()) -> None:
    """List jobs, newest first."""
    from gspo_cli.console import emit
    from gspo_cli.jobs import client as jobs
    from gspo_cli.jobs import view_list as view

    rows = jobs.list_jobs(address)
    emit(json_out, rows, view.render_list, rows)


@app.command("status")
def status_cmd(job_id: str = typer.Argument(..., help="Submission id."),
               address: str | None = options.address(), json_out: bool = options.json_out()) -> None:
    """Show one job's status, entrypoint and exit code."""
    from gspo_cli.console import emit
    from gspo_cli.jobs import client as jobs
    from gspo_cli.jobs import view_list as view

    row = jobs.job_status(job_id, address)
    emit(json_out, row, view.render_status, row)


@app.command("logs")
def logs_cmd(
    job_id: str = typer.Argument(..., help="Submission id."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Stream until the job ends (Ctrl-C detaches)."),
    raw: bool = typer.Option(False, "--raw", help="The whole log as Ray stores it: the job's own output (verl's and "
                                                  "vLLM's) and the `@@gspo {...}` event lines (for scripts); "
                                                  "colour codes removed unless stdout is a terminal."),
    address: str | None = options.address(),
    json_out: bool = options.json_out("With --follow: print the job's result as JSON at the end."),
) -> None:
    """Print a job's log as the command that started it showed it (`gspo train`: a line per step), or follow it."""
    from gspo_cli.jobs import client as jobs

    if follow:
        raise typer.Exit(jobs.follow_existing(job_id, address, json_out=json_out, raw=raw))
    from gspo_cli.jobs import view_list as view

    view.render_log(job_id, *jobs.job_logs(job_id, address), raw=raw)


@app.command("stop")
def stop_cmd(job_id: str = typer.Argument(..., help="Submission id."),
             address: str | None = options.address(), json_out: bool = options.json_out()) -> None:
    """Stop a running job and wait until Ray reports it stopped."""
    from gspo_cli.console import emit
    from gspo_cli.jobs import client as jobs
    from gspo_cli.jobs import view_list as view

    row = jobs.stop_job(job_id, address)
    emit(json_out, row, view.render_stopped, job_id, row)

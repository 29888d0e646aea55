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
    from gspo_cli.console import out

    out.print(jobs_table(rows, out.width))


# Ray's job statuses (ray.job_submission.JobStatus): the status column is as wide as the longest, never "SUCCEED…"
STATUS_WIDTH = max(len(s) for s in ("PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"))


def jobs_table(rows: list[dict], width: int):
    """The `gspo jobs list` table for a terminal `width` columns wide: at 80 the job id folds, whole statuses."""
    from rich.table import Table

    from gspo_cli.console import styled

    wide = width >= 120  # command and preset are also in the job id: shown as columns only where they fit
    table = Table(title="Ray jobs", title_justify="left", pad_edge=False)
    table.add_column("job id", overflow="fold")
    table.add_column("status", no_wrap=True, min_width=STATUS_WIDTH)
    if wide:
        table.add_column("command")
        table.add_column("run")  # the job id starts with it too; two runs of one preset are told apart
        table.add_column("preset")
    table.add_column("started", no_wrap=True)
    table.add_column("took", no_wrap=True, justify="right")
    for row in rows:
        meta = row["metadata"]
        extra = [meta.get("command", "-"), row.get("run") or "-", meta.get("preset", "-")] if wide else []
        started = row["start_time"] or "-"
        table.add_row(row["job_id"], styled(row["status"]), *extra,
                      started if wide else started[5:16], _took(row["start_time"], row["end_time"]))
    return table


def _took(start: str | None, end: str | None) -> str:
    """Run time of a job, `running` while it has no end."""
    import time

    if not start:
        return "-"
    parse = lambda t: time.mktime(time.strptime(t, "%Y-%m-%d %H:%M:%S"))  # noqa: E731
    seconds = int((parse(end) if end else time.time()) - parse(start))
    text = f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
    return text if end else f"{text}+"


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
    from gspo_cli.console import out, styled

    for key in ("job_id", "status", "entrypoint", "start_time", "end_time", "exit_code", "message"):
        value = styled(row[key]) if key == "status" else row[key]
        out.print(f"[bold]{key:>11}[/]  {value if value not in (None, '') else '-'}", highlight=False)


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
    text, mode = jobs.job_logs(job_id, address)
    from gspo_cli.console import out
    from gspo_cli.jobs.view import JobView
    from gspo_cli.jobs.view_mode import RAW

    # the same rendering as --follow (messages as lines, progress events as the bars' final state), on stdout
    with JobView.of(RAW if raw else mode, title=job_id, console=out, replay=True) as view:  # no live ETA
        view.feed(text)


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
    from gspo_cli.console import err, styled

    err.print(f"Job {job_id}: {styled(row['status'])}")

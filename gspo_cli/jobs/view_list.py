"""How `gspo jobs list | status | logs | stop` print (with --json: the rows of jobs/client.py as they are): the jobs table
(narrower at 80 columns), one job's fields, a finished log as --follow shows it, a stopped job's status line."""

from __future__ import annotations

import time
from typing import Any

from rich.table import Table

from gspo_cli.console import err, out, styled
from gspo_cli.jobs.view_mode import RAW, ViewMode


def render_list(rows: list[dict[str, Any]]) -> None:
    out.print(jobs_table(rows, out.width))


# Ray's job statuses (ray.job_submission.JobStatus): the status column is as wide as the longest, never "SUCCEED…"
STATUS_WIDTH = max(len(s) for s in ("PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"))


def jobs_table(rows: list[dict[str, Any]], width: int) -> Table:
    """The `gspo jobs list` table for a terminal `width` columns wide: at 80 the job id folds, whole statuses."""
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
    if not start:
        return "-"
    parse = lambda t: time.mktime(time.strptime(t, "%Y-%m-%d %H:%M:%S"))  # noqa: E731
    seconds = int((parse(end) if end else time.time()) - parse(start))
    text = f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
    return text if end else f"{text}+"


def render_status(row: dict[str, Any]) -> None:
    for key in ("job_id", "status", "entrypoint", "start_time", "end_time", "exit_code", "message"):
        value = styled(row[key]) if key == "status" else row[key]
        out.print(f"[bold]{key:>11}[/]  {value if value not in (None, '') else '-'}", highlight=False)


def render_log(job_id: str, text: str, mode: ViewMode, *, raw: bool) -> None:
    """`gspo jobs logs`: the same rendering as --follow (messages as lines, progress events as the bars' final
    state), on stdout: there the log is the data."""
    from gspo_cli.jobs.view import JobView

    with JobView.of(RAW if raw else mode, title=job_id, console=out, replay=True) as view:  # no live ETA
        view.feed(text)


def render_stopped(job_id: str, row: dict[str, Any]) -> None:
    err.print(f"Job {job_id}: {styled(row['status'])}")

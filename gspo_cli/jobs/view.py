"""Render a job's output: progress events become a rich progress bar, health events a line under it (and a log
line each), other lines pass through to stderr."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from gspo_cli.console import err
from gspo_cli.jobs import events
from gspo_cli.jobs.steps import StepLines
from gspo_cli.jobs.view_mode import ViewMode
from gspo_cli.untrusted import clean

if TYPE_CHECKING:
    from rich.console import Console


def _fmt_metric(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


_HEALTH_STYLE = {"error": "bold red", "warn": "yellow", "info": "cyan"}


def health_text(event: dict[str, Any]) -> str:
    """One line for a health event: severity, rule, step, message, value vs threshold (rich markup)."""
    style = _HEALTH_STYLE.get(str(event.get("severity")), "yellow")
    action = event.get("action")
    value, threshold = event.get("value"), event.get("threshold")
    numbers = f" (value {_fmt_metric(value)}, threshold {_fmt_metric(threshold)})" \
        if value is not None and threshold is not None else ""
    rule = "" if event.get("rule") == action else f" [bold]{escape(str(event.get('rule')))}[/]"
    return (f"[{style}]health {escape(str(action))}[/]{rule} at step "
            f"{event.get('step')}: {escape(str(event.get('message', '')))}{escape(numbers)}")


# Ray's own job-manager logging in a job's log (`2026-01-01 10:00:00,123\tINFO job_manager.py:581 -- Runtime env is
# setting up.`): about Ray, not the job; WARNING and ERROR lines are kept.
RAY_INFO = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\s+(INFO|DEBUG) \S+\.py:\d+ -- ")
# A job's clean failure, as `jobs.entry.main` prints it: the follower holds these and prints them once, in its summary.
JOB_ERROR = re.compile(r"^(Error|Hint): ")


def plain_line(line: str) -> str | None:
    """A log line as plain text: a message or health event as its text, other events None, Ray's INFO lines None,
    other lines as is."""
    event = events.parse_line(line)
    if event is None:
        return None if RAY_INFO.match(line) else line
    if event.get("kind") == "message":
        return str(event.get("text", ""))
    if event.get("kind") == "health":
        return Text.from_markup(health_text(event)).plain
    return None


class _ProgressWithHealth(Progress):
    """A progress display with the newest health line under the bars."""

    health_line = ""

    def get_renderables(self):
        yield from super().get_renderables()
        if self.health_line:
            yield Text.from_markup(self.health_line)


class JobView:
    """Feed it log text (`feed`) or events (`handle_event`); use as a context manager around the run."""

    def __init__(self, title: str = "", quiet: bool = False, console: Console | None = None,
                 hold_errors: bool = False, step_lines: bool = False,
                 replay: bool = False, raw: bool = False) -> None:
        self.title = title
        # every line as Ray stores it (`--raw`), escape sequences removed unless the console is a terminal
        self.raw = raw
        # a finished log read back at once (`gspo jobs logs` without --follow): no elapsed time or ETA, which would
        # be measured on this replay's clock, not the job's
        self.replay = replay
        self.quiet = quiet
        # one plain line per progress event (jobs/steps.py) instead of a bar: every terminal, log file and CI shows
        # it as it comes (a bar is redrawn only on a TTY; elsewhere it shows once, at the end)
        self.steps = StepLines() if step_lines else None
        # A live follower prints the job's `Error:` / `Hint:` lines once, in its summary (`follow._finish`).
        self.hold_errors = hold_errors
        self.job_error: list[str] = []
        # stderr for a live run (chatter beside --json); `gspo jobs logs` passes stdout: there the log is the data
        self.console = console if console is not None else err
        self.result: dict[str, Any] | None = None
        self.health: list[dict[str, Any]] = []
        self._buffer = ""
        self._progress: _ProgressWithHealth | None = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> JobView:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.flush()
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    # -- raw log text (Ray job logs arrive in arbitrary chunks)
    def feed(self, chunk: str) -> None:
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            self._line(line)

    def flush(self) -> None:
        if self._buffer:
            self._line(self._buffer)
            self._buffer = ""

    @classmethod
    def of(cls, mode: ViewMode, **kwargs: Any) -> JobView:
        """The view `mode` asks for (jobs/view_mode.py)."""
        return cls(quiet=mode.quiet, step_lines=mode.step_lines, raw=mode.raw, **kwargs)

    def _line(self, line: str) -> None:
        if self.raw:
            self.console.file.write((line if self.console.is_terminal else clean(line, newlines=True)) + "\n")
            self.console.file.flush()  # a follower's reader sees each line as it comes
            return
        event = events.parse_line(line)
        if event is not None:
            self.handle_event(event)
        elif RAY_INFO.match(line):
            return
        elif self.hold_errors and JOB_ERROR.match(line):
            self.job_error.append(line.rstrip())
        elif not self.quiet and line.strip():
            self._print(f"[dim]{escape(clean(line.rstrip()))}[/]")  # verl's and vLLM's colour codes would show raw

    def _print(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, highlight=False)
        else:
            self.console.print(text, highlight=False)

    # -- structured events
    def handle_event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "progress":
            self._on_progress(event)
        elif kind == "message":
            self._print(escape(str(event.get("text", ""))))
        elif kind == "health":
            self.health.append(event)
            line = health_text(event)
            self._print(line)  # every event stays in the scrollback; the newest also sits under the bar
            if self._progress is not None:
                self._progress.health_line = line
                self._progress.refresh()
        elif kind == "result":
            payload = event.get("payload")
            self.result = payload if isinstance(payload, dict) else {"result": payload}

    def _on_progress(self, event: dict[str, Any]) -> None:
        if self.steps is not None:
            self._print(escape(self.steps.line(event)))
            return
        if self._progress is None:
            clock = () if self.replay else (TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
            self._progress = _ProgressWithHealth(
                TextColumn("[bold]{task.description}"), BarColumn(), TaskProgressColumn(),
                TextColumn("{task.fields[metrics]}"), *clock, console=self.console, transient=False,
            )
            if self.health:
                self._progress.health_line = health_text(self.health[-1])
            self._progress.start()
        name = str(event.get("task") or self.title or "progress")
        metrics = event.get("metrics") or {}
        shown = "  ".join(f"{k.split('/')[-2] if k.count('/') >= 2 else k}={_fmt_metric(v)}" for k, v in
                          list(metrics.items())[:4])
        total = event.get("total")
        if name not in self._tasks:
            self._tasks[name] = self._progress.add_task(name, total=total, metrics=shown)
        self._progress.update(self._tasks[name], completed=event.get("step", 0), total=total, metrics=shown)

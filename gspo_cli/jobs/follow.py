"""Follow a Ray job: stream its log through the progress view, watch its status and the cluster's nodes, and
turn the end into one exit code.

Node loss: while a job runs, the follower polls the head for nodes that die; it prints which node was lost (name,
IP, Ray's reason) as soon as the head knows it, and if the job then fails, the summary says so and gspo exits
with `NODE_LOST_EXIT` (75, EX_TEMPFAIL: rerun or `--resume` continues from the last complete checkpoint). The log
stream of a job whose driver node died can hang, so the job status, not the stream, decides when it is over.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from gspo_cli.errors import ClusterError, first_line
from gspo_cli.shell import quote

if TYPE_CHECKING:
    from ray.job_submission import JobDetails, JobSubmissionClient

    from gspo_cli.jobs.target import ClusterTarget
    from gspo_cli.jobs.view_mode import ViewMode

TERMINAL = {"SUCCEEDED", "FAILED", "STOPPED"}
NODE_LOST_EXIT = 75
POLL_S = 1.0
GRACE_S = 3.0  # after the job ends, how long the log stream may still deliver its last lines


def status_name(info: JobDetails) -> str:
    status = info.status
    return getattr(status, "value", str(status))


def job_info(job_client: JobSubmissionClient, job_id: str, target: ClusterTarget) -> JobDetails:
    try:
        return job_client.get_job_info(job_id)
    except RuntimeError as exc:
        from gspo_cli.jobs import ray_errors

        failure = ray_errors.classify(exc)
        if failure.kind == ray_errors.NOT_FOUND:
            raise ClusterError(
                f"no job with id {job_id!r} on {target.dashboard_url}", "list jobs with `gspo jobs list`"
            ) from None
        if failure.kind == ray_errors.AUTH:
            from gspo_cli.jobs.target import raise_for

            raise_for(exc, target, f"cannot read job {job_id!r} on")
        raise ClusterError(f"cannot read job {job_id!r}: {failure.detail[:200]}") from None
    except Exception as exc:  # a server that passed the version check but is no Ray jobs API (JSON, schema errors)
        raise not_ray(target, exc) from None


def not_ray(target: ClusterTarget, exc: BaseException) -> ClusterError:
    """The one line for an address that answers HTTP but not as Ray's jobs API."""
    detail = " ".join(str(exc).split())[:150]
    return ClusterError(f"{target.dashboard_url} (from {target.source}) does not answer as a Ray jobs API: "
                        f"{type(exc).__name__}" + (f": {detail}" if detail else ""),
                        "point --address / RAY_ADDRESS at the Ray dashboard (http://HEAD:8265)")


class _Tail:
    """The job's log stream in a daemon thread with its own event loop, so that the main thread stays free to poll
    the job and the nodes and to take Ctrl-C as a plain KeyboardInterrupt."""

    def __init__(self, job_client, job_id: str, view):
        import threading

        self.loop = asyncio.new_event_loop()
        self.task: asyncio.Task[None] | None = None
        self.broken: str | None = None  # why the stream ended before the job did (a node holding it died, ...)
        self.thread = threading.Thread(target=self._run, args=(job_client, job_id, view), daemon=True)

    def _run(self, job_client, job_id: str, view) -> None:
        async def tail() -> None:
            async for chunk in job_client.tail_job_logs(job_id):
                view.feed(chunk)

        asyncio.set_event_loop(self.loop)
        self.task = task = self.loop.create_task(tail())
        try:
            self.loop.run_until_complete(task)
        except asyncio.CancelledError:  # `stop`: the job ended or we detach
            pass
        except Exception as exc:  # noqa: BLE001 - the stream broke (Ray: RuntimeError; aiohttp: its own): said by _watch
            self.broken = f"{type(exc).__name__}: {first_line(exc)}"

    def done(self) -> bool:
        return not self.thread.is_alive()

    def stop(self, grace_s: float) -> None:
        self.thread.join(grace_s)
        if self.thread.is_alive() and self.task is not None:
            self.loop.call_soon_threadsafe(self.task.cancel)
            self.thread.join(2.0)


def _watch(job_client, job_id: str, view, watch, interrupted) -> Any:
    """Tail the log until the job is terminal (by status); report nodes lost meanwhile. Returns the final info."""
    from rich.markup import escape

    from gspo_cli.console import err

    tail = _Tail(job_client, job_id, view)
    tail.thread.start()
    try:
        while True:
            tail.thread.join(POLL_S)
            if interrupted.is_set():  # Ctrl-C that a library call swallowed: detach all the same
                raise KeyboardInterrupt
            info = job_client.get_job_info(job_id)
            for node in watch.poll():
                err.print(f"[red]Ray lost {_describe(node)}[/]", highlight=False)
            if tail.done() or status_name(info) in TERMINAL:
                if tail.broken:
                    err.print(f"[yellow]The log stream of job {job_id} broke ({escape(tail.broken)}); its status and "
                              "saved log follow.[/]", highlight=False)
                return info
    finally:
        tail.stop(0.0 if interrupted.is_set() else GRACE_S)


def _describe(node: dict[str, Any]) -> str:
    from gspo_cli.jobs.nodestate import describe

    return describe(node)


def _wait_terminal(job_client, job_id: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    info = job_client.get_job_info(job_id)
    while status_name(info) not in TERMINAL and time.monotonic() < deadline:
        time.sleep(0.5)
        info = job_client.get_job_info(job_id)
    return info


def follow_job(target: ClusterTarget, job_id: str, *, json_out: bool = False, mode: ViewMode | None = None) -> int:
    """Stream a job's logs, render its events, and return an exit code reflecting its final status. `mode`: how
    (jobs/view_mode.py); None: as the job's metadata records (what the command that submitted it showed)."""
    from gspo_cli.console import err, out
    from gspo_cli.jobs.nodestate import LossWatch
    from gspo_cli.jobs.target import client
    from gspo_cli.jobs.view import JobView
    from gspo_cli.jobs.view_mode import ViewMode

    job_client = client(target)
    info = job_info(job_client, job_id, target)  # unknown id -> clean error before streaming
    mode = mode if mode is not None else ViewMode.from_metadata(info.metadata)
    # the raw log is the data (stdout); rendered lines are chatter beside --json (stderr)
    view = JobView.of(mode, title=job_id, hold_errors=not mode.raw, console=out if mode.raw else err)
    watch = LossWatch(target)
    interrupted, restore = _catch_ctrl_c()
    try:
        watch.poll(force=True)  # the nodes alive now; later polls report the ones that die
        with view:
            _watch(job_client, job_id, view, watch, interrupted)
            view.flush()
            info = _wait_terminal(job_client, job_id)
    except KeyboardInterrupt:
        err.print(
            f"\nDetached from job {job_id}; it keeps running.\n"
            f"  reattach: gspo jobs logs {quote(job_id)} --follow\n"
            f"  stop:     gspo jobs stop {quote(job_id)}", markup=False
        )
        _exit_soon(130)
        return 130
    finally:
        restore()
    return _finish(info, job_id, view, job_client, watch, json_out=json_out, mode=mode)


def _catch_ctrl_c():
    """A flag that Ctrl-C sets (besides raising KeyboardInterrupt as usual), so the watch loop detaches even when
    a Ray or HTTP call caught the KeyboardInterrupt it raised."""
    import signal
    import threading

    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return interrupted, lambda: None

    def on_sigint(signum, frame):
        interrupted.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    return interrupted, lambda: signal.signal(signal.SIGINT, previous) if previous is not None else None


def _exit_soon(code: int, after_s: float = 5.0) -> None:
    """After a detach the gspo process must end: if a library thread (the log stream, gRPC) holds interpreter
    shutdown past `after_s`, leave without it. The job itself is not touched. Only in the gspo CLI process (an
    in-process caller, e.g. a test runner, keeps its own life)."""
    import os
    import sys
    import threading
    from pathlib import Path

    if Path(sys.argv[0]).name != "gspo" and not sys.argv[0].endswith(os.path.join("gspo_cli", "__main__.py")):
        return

    def leave() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    timer = threading.Timer(after_s, leave)
    timer.daemon = True
    timer.start()


def _lost_during(watch, info) -> list[dict[str, Any]]:
    """Nodes lost while we watched, plus any that died after the job started but before we looked."""
    lost = {n["node_id"]: n for n in watch.lost}
    start_s = (getattr(info, "start_time", None) or 0) / 1000
    if status_name(info) == "FAILED" and start_s:
        from gspo_cli.jobs.nodestate import list_all, split

        try:
            _, dead = split(list_all(watch.target))
        except ClusterError:
            dead = []
        for node in dead:
            if (node["ended_at"] or 0) >= start_s:
                lost.setdefault(node["node_id"], node)
    return list(lost.values())


def log_lines(job_client, job_id: str) -> tuple[list[str], str | None]:
    """The job's log with events as the text they stand for (progress lines dropped: the bar showed them), so the
    tail reads as a log; or ([], why it could not be read: the log lived on a lost node, the head went away)."""
    from gspo_cli.jobs.view import plain_line

    try:
        text = job_client.get_job_logs(job_id)
    except Exception as exc:  # noqa: BLE001 - a failure's report must not fail itself: the cause is said instead
        return [], f"{type(exc).__name__}: {first_line(exc)}"
    return [line for raw in text.splitlines() if (line := plain_line(raw)) is not None], None


def _finish(info, job_id: str, view, job_client, watch, *, json_out: bool, mode: ViewMode) -> int:
    from rich.markup import escape

    from gspo_cli.console import err, print_json
    from gspo_cli.jobs.secret_env import retire_job

    status = status_name(info)
    exit_code = getattr(info, "driver_exit_code", None)
    retire_job(job_id)  # the job ended: its secrets file goes (its driver does it too, unless it was killed)
    if status == "SUCCEEDED":
        if json_out and view.result is not None:
            print_json(view.result)
        lost = watch.lost
        if lost:
            err.print(f"[yellow]The job succeeded although Ray lost {len(lost)} node(s) meanwhile.[/]")
        err.print(f"[green]Job {job_id} succeeded.[/]")
        return 0
    lost = _lost_during(watch, info) if status == "FAILED" else []
    shown, unread = log_lines(job_client, job_id)
    from gspo_cli.jobs.log_excerpt import why_failed

    why = why_failed(shown)  # the exception lines and the last lines, not the log's last 25 (warnings, mostly)
    code = exit_code if isinstance(exit_code, int) and exit_code > 0 else 1
    if lost:
        code = NODE_LOST_EXIT
    err.print(f"[red]Job {job_id} {status.lower()}[/]" + (f" (exit code {exit_code})" if exit_code else "") + ".")
    if view.job_error:
        # A clean failure (GspoError in the job): its one line and hint, once; the log above already streamed.
        for line in view.job_error:
            err.print(f"[red]{escape(line)}[/]" if line.startswith("Error:") else escape(line), highlight=False)
    else:
        if info.message and not info.message.startswith("Job entrypoint command failed"):  # that one quotes the log
            err.print(f"[dim]Ray: {escape(info.message.strip().splitlines()[-1][:300])}[/]")
        if why:
            err.print(f"[dim]Why, from the job log ({len(why)} of its {len(shown)} lines):[/]")
            err.print("\n".join(why), markup=False, highlight=False)
        if unread:
            err.print(f"[dim]No excerpt: the job's log could not be read ({escape(unread)}).[/]", highlight=False)
    for node in lost:
        err.print(f"[red]Lost during the job: {_describe(node)}[/]", highlight=False)
    if lost:
        err.print(f"gspo exits with {NODE_LOST_EXIT} (node lost). Continue from the last complete checkpoint: "
                  "rerun the same command with the same --run-name (native) or `gspo train --resume RUN` (verl).")
    err.print(f"Full log: gspo jobs logs {quote(job_id)}" + (" --raw" if mode.hides_output else ""), markup=False)
    if status == "STOPPED":
        return 1
    return code

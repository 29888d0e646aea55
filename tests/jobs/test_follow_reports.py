"""What `gspo train` / `gspo jobs logs --follow` say when the job's log cannot be had (jobs/follow.py): a log stream
that breaks before the job ends, and a saved log that cannot be read after a failure, are each said in one line
with their cause; a stream that ends with the job, or is stopped by us, says nothing. The clients stand in for
Ray's JobSubmissionClient at its two log calls only (their errors as Ray 2.x raises them: RuntimeError)."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

from gspo_cli.jobs import follow


class _Client:
    def __init__(self, chunks=(), *, stream_error=None, wait=False, logs="", logs_error=None, status="RUNNING"):
        self.chunks, self.stream_error, self.wait = list(chunks), stream_error, wait
        self.logs, self.logs_error, self.status = logs, logs_error, status

    async def tail_job_logs(self, job_id):
        for chunk in self.chunks:
            yield chunk
        if self.wait:
            await asyncio.sleep(3600)
        if self.stream_error is not None:
            raise self.stream_error

    def get_job_logs(self, job_id):
        if self.logs_error is not None:
            raise self.logs_error
        return self.logs

    def get_job_info(self, job_id):
        return SimpleNamespace(status=self.status)


class _View:
    def __init__(self):
        self.fed: list[str] = []

    def feed(self, chunk):
        self.fed.append(chunk)


def _tail(client):
    view = _View()
    tail = follow._Tail(client, "job-1", view)
    tail.thread.start()
    return tail, view


def test_a_broken_log_stream_keeps_its_cause_an_ended_or_stopped_one_none():
    broken = RuntimeError("WebSocket connection closed unexpectedly with close code 1006\nmore")
    tail, view = _tail(_Client(["a\n", "b\n"], stream_error=broken))
    tail.thread.join(10)
    assert view.fed == ["a\n", "b\n"]
    assert tail.broken == "RuntimeError: WebSocket connection closed unexpectedly with close code 1006"
    ended, _ = _tail(_Client(["a\n"]))  # control: the stream ends with the job
    ended.thread.join(10)
    assert ended.done() and ended.broken is None
    stopped, _ = _tail(_Client(wait=True))  # control: cancelled by `stop` (the job ended, or we detach)
    stopped.stop(0.2)
    assert stopped.done() and stopped.broken is None


def test_the_watch_says_the_broken_stream_in_one_line(capsys):
    client = _Client(stream_error=RuntimeError("WebSocket error for job job-1: ServerDisconnectedError"))
    watch = SimpleNamespace(poll=lambda: [])
    follow._watch(client, "job-1", _View(), watch, threading.Event())
    err = capsys.readouterr().err
    assert "The log stream of job job-1 broke (RuntimeError: WebSocket error for job job-1: " \
           "ServerDisconnectedError); its status and saved log follow." in " ".join(err.split())
    follow._watch(_Client(["a\n"]), "job-1", _View(), watch, threading.Event())  # control: a stream that ended
    assert "broke" not in capsys.readouterr().err


def test_a_saved_log_that_cannot_be_read_is_said_with_its_cause():
    lost = RuntimeError("Request failed with status code 500: the node holding the log is gone")
    assert follow.log_lines(_Client(logs_error=lost), "job-1") == (
        [], "RuntimeError: Request failed with status code 500: the node holding the log is gone")
    refused = ConnectionRefusedError(111, "Connection refused")
    assert follow.log_lines(_Client(logs_error=refused), "job-1")[1] == \
        "ConnectionRefusedError: [Errno 111] Connection refused"
    assert follow.log_lines(_Client(logs="one\ntwo\n"), "job-1") == (["one", "two"], None)  # control: it reads


def test_the_failure_report_says_why_there_is_no_excerpt(capsys):
    from gspo_cli.jobs.view_mode import ViewMode

    info = SimpleNamespace(status="FAILED", driver_exit_code=1, message="", start_time=None)
    view = SimpleNamespace(job_error=[], result=None)
    watch = SimpleNamespace(lost=[])
    client = _Client(logs_error=RuntimeError("Request failed with status code 500"))
    code = follow._finish(info, "job-1", view, client, watch, json_out=False, mode=ViewMode())
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1 and "Job job-1 failed (exit code 1)." in err
    assert "No excerpt: the job's log could not be read (RuntimeError: Request failed with status code 500)." in err
    client = _Client(logs="Traceback (most recent call last):\nValueError: bad\n")  # control: the log reads
    follow._finish(info, "job-1", view, client, watch, json_out=False, mode=ViewMode())
    err = capsys.readouterr().err
    assert "No excerpt" not in err and "ValueError: bad" in err

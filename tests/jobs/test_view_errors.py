"""A job's log as the follower renders it: Ray's own INFO lines dropped, the job's one-line error held for the
summary (printed once, not three times: stream, Ray's message, log tail)."""

from __future__ import annotations

import io
import subprocess
import sys

from rich.console import Console

from gspo_cli.jobs.view import JobView, plain_line

LOG = [
    "2026-12-01 23:00:00,123\tINFO job_manager.py:581 -- Runtime env is setting up.",
    "2026-12-01 23:00:01,456\tWARNING job_manager.py:600 -- something Ray wants seen",
    "reading the raw data",
    "Error: prepared data missing: /x/train.parquet",
    "Hint: run: gspo prepare-data --preset tiny",
]


def _render(hold: bool) -> tuple[str, JobView]:
    buf = io.StringIO()
    view = JobView(console=Console(file=buf, width=200, no_color=True), hold_errors=hold)
    with view:
        view.feed("\n".join(LOG) + "\n")
    return buf.getvalue(), view


def test_follower_drops_ray_info_and_holds_the_error_for_its_summary():
    shown, view = _render(hold=True)
    assert "Runtime env is setting up" not in shown and "something Ray wants seen" in shown
    assert "reading the raw data" in shown and "Error:" not in shown
    assert view.job_error == LOG[3:]
    shown, view = _render(hold=False)  # `gspo jobs logs`: the log as it is, minus Ray's INFO
    assert "Error: prepared data missing" in shown and view.job_error == []
    assert [plain_line(line) for line in LOG[:3]] == [None, LOG[1], LOG[2]]


def test_unexpected_exception_in_a_job_is_one_line_with_a_hint_and_a_traceback_with_debug(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"command": "prepare-data", "preset": 7}')
    env_base = {"PATH": "/usr/bin:/bin", "GSPO_HOME": str(tmp_path), "PYTHONPATH": ":".join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "gspo_cli.job_kinds", "prepare-data", str(bad)],
                          capture_output=True, text=True, env=env_base, timeout=120)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in proc.stderr and lines[0].startswith("Error: "), proc.stderr
    debug = subprocess.run([sys.executable, "-m", "gspo_cli.job_kinds", "prepare-data", str(bad)],
                           capture_output=True, text=True, env={**env_base, "GSPO_DEBUG": "1"}, timeout=120)
    # a request without `sets` is a KeyError inside the job, not a GspoError: the traceback only with --debug
    assert lines == ["Error: KeyError: 'sets'",
                     "Hint: an unexpected failure inside the job; rerun with --debug for the traceback"]
    assert "Traceback" in debug.stderr and "KeyError: 'sets'" in debug.stderr


def test_a_log_read_back_shows_no_live_eta():
    """`gspo jobs logs` without --follow reads the whole log at once: elapsed time and ETA would be measured on
    the replay's clock (issue #33 saw a live ETA for a finished job); the follower keeps them."""
    import json

    from gspo_cli.jobs import events

    log = "".join(events.PREFIX + json.dumps({"kind": "progress", "step": s, "total": 10, "task": "train"}) + "\n"
                  for s in (1, 5, 10))

    def shown(replay: bool) -> str:
        buf = io.StringIO()
        with JobView(console=Console(file=buf, width=200, no_color=True), replay=replay) as view:
            view.feed(log)
        return buf.getvalue()

    assert "train" in shown(True) and "100%" in shown(True) and "ETA" not in shown(True)
    assert "ETA" in shown(False)  # the control: a live follower shows it

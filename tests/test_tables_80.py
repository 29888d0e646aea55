"""Tables at 80 columns keep words whole (issue #33: 'limits.c onf' in `env doctor`, 'SUCCEED…' in `jobs list`)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from gspo_cli.checks import Check

LIMITS_FIX = "raise it: add '* - nofile 65536' to /etc/security/limits.conf and log in again"


def _render(table, width: int = 80) -> list[str]:
    buf = io.StringIO()
    Console(file=buf, width=width, no_color=True).print(table)
    return buf.getvalue().splitlines()


def _checks() -> list[Check]:
    return [
        Check("cann", "skip", "no Ascend NPU stack on this host", fix="only needed on Ascend hosts"),
        Check("node.open_files", "warn", "open files limit 1024 (ulimit -n); Ray wants 65536", fix=LIMITS_FIX),
        Check("stack.known_bad", "ok", "none of 6 known-bad version combinations"),
    ]


def test_doctor_table_wraps_between_words_at_80_columns():
    from gspo_cli.env.view import doctor_table

    lines = _render(doctor_table(_checks(), title="gspo env doctor", width=80))
    assert all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    assert "/etc/security/limits.conf" in text and "node.open_files" in text and "stack.known_bad" in text
    # the control: the former table (every column overflow="fold", no widths) folds the path mid-word
    old = Table(title="gspo env doctor", title_justify="left")
    for col in ("check", "status", "found", "fix"):
        old.add_column(col, overflow="fold")
    for c in _checks():
        old.add_row(c.name, c.status, c.message, c.fix)
    assert "/etc/security/limits.conf" not in "\n".join(_render(old))


def test_jobs_table_shows_whole_statuses_at_80_columns():
    from gspo_cli.jobs.view_list import jobs_table

    rows = [{"job_id": "train-qwen3-32b-4x16-20261203-121212-a1b2c3d4e5", "status": status, "metadata": {},
             "start_time": "2026-12-03 12:12:12", "end_time": "2026-12-03 12:40:00"}
            for status in ("SUCCEEDED", "FAILED", "RUNNING")]
    lines = _render(jobs_table(rows, 80))
    assert all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    assert text.count("SUCCEEDED") == 1 and "FAILED" in text and "…" not in text  # the job id folds instead

"""Issue #39, left over: a metrics.jsonl line over the reader's limits (too long, nested too deep) is left out and
said, once per run, by `runs list`, `runs show` and `report`; a torn last line (a job mid-write) stays silent.

On e0ecdb8 a too-deep line was skipped silently, as if torn, and a too-long one was named alone, uncounted: both
tests below fail there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gspo_cli import untrusted

pytestmark = pytest.mark.security

DEEP_LINE = '{"step": 90, "data": ' + "[" * 200 + "]" * 200 + "}"
LONG_LINE = json.dumps({"step": 91, "data": {"x": "a" * (untrusted.MAX_LINE + 1)}})
TORN = '{"step": 92, "data": {"reward/mean": 0.'  # a kill mid-write: no newline, not JSON


def _run(home: Path, name: str, extra: list[str], *, end: str = "\n") -> Path:
    run = home / "runs" / name
    run.mkdir(parents=True)
    (run / "job_state.json").write_text(json.dumps({"status": "running"}))
    good = [json.dumps({"step": s, "data": {"critic/rewards/mean": 0.5}}) for s in range(1, 6)]
    (run / "metrics.jsonl").write_text("\n".join(good + extra) + end)
    return run


def test_lines_over_the_limits_are_counted_once_per_file(tmp_path):
    """The reader counts by line number: reading the file twice (a command reads it more than once) counts once;
    a torn last line is not counted. e0ecdb8: the deep lines were not counted at all."""
    run = _run(tmp_path, "planted", [DEEP_LINE, DEEP_LINE, LONG_LINE, TORN], end="")
    path = run / "metrics.jsonl"
    from gspo_cli.metrics.jsonl import read_metrics

    assert [r["step"] for r in read_metrics(path)] == [1, 2, 3, 4, 5]
    assert len(read_metrics(path)) == 5
    said = dict(untrusted.skipped())[str(path)]
    assert said == (f"3 lines of {path} (2 nested deeper than {untrusted.MAX_DEPTH} levels, 1 longer than "
                    f"{untrusted.MAX_LINE} characters)"), said


def test_runs_list_show_and_report_say_it_once_per_run(gspo_home, gspo_at):
    """`runs list`, `runs show`, `report`: exit 0, the good run listed, one warning line for the planted run's
    metrics.jsonl, none for a run whose only odd line is a torn last one (control)."""
    planted = _run(gspo_home, "planted", [DEEP_LINE, LONG_LINE])
    torn = _run(gspo_home, "torn", [TORN], end="")
    for args in (("runs", "list"), ("runs", "show", "planted"), ("report", "planted"), ("runs", "show", "torn")):
        proc = gspo_at(*args, env={"COLUMNS": "1000"})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
        warned = [ln for ln in proc.stderr.splitlines() if "metrics.jsonl" in ln and "skipped" in ln]
        if args[-1] == "torn":
            assert warned == [], proc.stderr
            continue
        assert warned == [f"warning: skipped 2 lines of {planted / 'metrics.jsonl'} (1 nested deeper than "
                          f"{untrusted.MAX_DEPTH} levels, 1 longer than {untrusted.MAX_LINE} characters)"], \
            (args, proc.stderr)
        assert str(torn) not in proc.stderr

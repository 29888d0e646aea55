"""Health events in the job view: a log line each, the newest under the progress bar, plain text in log tails."""

from __future__ import annotations

import io
import json

from rich.console import Console

from gspo_cli.jobs import view as view_module
from gspo_cli.jobs.events import PREFIX

HEALTH = {"kind": "health", "step": 8, "rule": "nonfinite", "action": "stop", "severity": "error", "value": None,
          "threshold": "finite", "message": "actor/pg_loss is NaN/inf"}


def test_health_line_sits_under_the_bar_and_in_the_log(monkeypatch):
    buffer = io.StringIO()
    monkeypatch.setattr(view_module, "err", Console(file=buffer, width=120, force_terminal=False))
    with view_module.JobView("t") as view:
        view.feed(PREFIX + json.dumps({"kind": "progress", "step": 7, "total": 20, "task": "train"}) + "\n")
        view.feed(PREFIX + json.dumps(HEALTH) + "\n")
        assert view._progress.health_line == view_module.health_text(HEALTH)
        rendered = list(view._progress.get_renderables())
        assert len(rendered) == 2 and "nonfinite" in rendered[1].plain
    text = buffer.getvalue()
    assert "health stop nonfinite at step 8: actor/pg_loss is NaN/inf" in text
    assert view.health == [HEALTH]


def test_plain_line_turns_events_into_their_text():
    assert view_module.plain_line(PREFIX + json.dumps(HEALTH)) == "health stop nonfinite at step 8: actor/pg_loss is NaN/inf"
    assert view_module.plain_line(PREFIX + json.dumps({"kind": "message", "text": "saved"})) == "saved"
    assert view_module.plain_line(PREFIX + json.dumps({"kind": "progress", "step": 1})) is None
    assert view_module.plain_line("Traceback (most recent call last):") == "Traceback (most recent call last):"

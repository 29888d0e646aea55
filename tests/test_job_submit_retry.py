"""Submitting right after a head starts: Ray answers 500 "No available agent to submit job, please try again later"
until its dashboard agent registers (seen on this 2-core box under load). gspo waits for it, briefly."""

from __future__ import annotations

import pytest

from gspo_cli.errors import ClusterError
from gspo_cli.jobs import client


class AgentComesUpLate:
    """Ray's JobSubmissionClient as it behaves before the agent registers: the same RuntimeError text."""

    def __init__(self, refusals: int):
        self.refusals, self.calls = refusals, 0

    def submit_job(self, **kw):
        self.calls += 1
        if self.calls <= self.refusals:
            raise RuntimeError("Request failed with status code 500: No available agent to submit job, "
                               "please try again later..")
        return kw["submission_id"]


def test_submit_waits_for_the_agent(monkeypatch):
    fake = AgentComesUpLate(refusals=2)
    monkeypatch.setattr(client, "client", lambda target: fake)
    monkeypatch.setattr(client.time, "sleep", lambda s: None)
    target = type("T", (), {"dashboard_url": "http://127.0.0.1:1"})()
    assert client.submit(target, "true", job_id="j") == "j" and fake.calls == 3


def test_submit_gives_up_with_one_line_after_the_wait(monkeypatch):
    fake = AgentComesUpLate(refusals=10**6)
    monkeypatch.setattr(client, "client", lambda target: fake)
    monkeypatch.setattr(client.time, "sleep", lambda s: None)
    monkeypatch.setattr(client, "AGENT_WAIT_S", 0.0)
    target = type("T", (), {"dashboard_url": "http://127.0.0.1:1"})()
    with pytest.raises(ClusterError, match="Ray refused the job: .*No available agent"):
        client.submit(target, "true", job_id="j")

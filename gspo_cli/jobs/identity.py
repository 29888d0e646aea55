"""Which job this process is: the id `jobs.client.submit` gives a Ray job in its env, or `local-<pid>` in-process.

A shared piece of the job layer (the run lock in `runs/lock.py` records it; the client sets it)."""

from __future__ import annotations

import os

JOB_ID_VAR = "GSPO_JOB_ID"  # set in a Ray job's env by `jobs.client.submit`: the job knows its own id


def own_job_id() -> str:
    """This process's job id: the Ray job's submission id, or `local-<pid>` for an in-process (--local) job."""
    return os.environ.get(JOB_ID_VAR) or f"local-{os.getpid()}"

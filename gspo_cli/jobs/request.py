"""How a job receives its request: one JSON file whose path is the job's only argument.

    python -m gspo_cli.job_kinds COMMAND REQUEST.json

The CLI process validates its flags, resolves relative paths (a Ray job runs in another working directory) and
writes the request; the job reads it back with `read`. The file sits on `$GSPO_HOME` (shared by every node of
a cluster) in the run folder of a training job, else under `$GSPO_HOME/jobs/`, and stays there as a record of
what the job was asked to do. A Ray job and an in-process run (`--local`) read the same file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gspo_cli.errors import ConfigError
from gspo_cli.fsutil import atomic_write_json

# What a job is given: a payload to write, a written request file, raw argv, nothing; or a callable returning one
# of these when the job is about to start.
Request = dict[str, Any] | str | os.PathLike | list[str] | None
JobRequest = Request | Callable[[], Request]


def write(command: str, payload: dict[str, Any], path: str | Path | None = None) -> Path:
    """Write the request of a `command` job (to `path`, else a new file under $GSPO_HOME/jobs/); returns its path."""
    from gspo_cli import layout

    dest = Path(path) if path is not None else layout.job_request_file(command)
    if path is None:  # $GSPO_HOME/jobs: private to this user (requests name data paths, models, settings)
        from gspo_cli.private import ensure_private_dir

        ensure_private_dir(dest.parent, "job requests folder")
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(dest, {"command": command, **payload})
    return dest.resolve()


def entry_args_for(command: str, request: JobRequest) -> list[str]:
    """The job's argv for `request`: a dict is written as a new request file, a path names one already written;
    no request = no argument (a job that takes none). A list is passed as is (raw arguments)."""
    if callable(request):  # written only when the job is about to start (after the run lock is taken)
        request = request()
    if request is None:
        return []
    if isinstance(request, dict):
        return [str(write(command, request))]
    if isinstance(request, (str, os.PathLike)):
        return [str(request)]
    return list(request)


def read(argv: list[str], command: str) -> dict[str, Any]:
    """The request of a `command` job from its argv (exactly one path); a usage line and exit 2 otherwise."""
    if len(argv) != 1:
        from gspo_cli.jobs.entry import ENTRY_MODULE

        print(f"usage: python -m {ENTRY_MODULE} {command} REQUEST.json", file=sys.stderr)
        raise SystemExit(2)
    try:
        data = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the {command} job request {argv[0]}: {exc}",
                          "the file is written by the gspo command that submits the job; is $GSPO_HOME shared?") \
            from None
    if not isinstance(data, dict) or data.get("command") != command:
        raise ConfigError(f"{argv[0]} is not a {command} job request")
    return data

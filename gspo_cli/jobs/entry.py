"""How a gspo job runs: `python -m gspo_cli.job_kinds COMMAND [ARGS...]` (the wire command of every Ray job).

The job kinds themselves (which command runs which function) are registered in `gspo_cli/job_kinds.py`, a module
above the services: this layer runs jobs and never imports the services that implement them. It knows the
registry only by its module name, `ENTRY_MODULE`, the name Ray runs with `python -m`; an in-process (`--local`)
run imports that same module, so both execute exactly the same code. A kind's function takes the remaining argv
(the path of its request file, see `jobs.request`; none for `cluster-smoke`) and returns an exit code.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

ENTRY_MODULE = "gspo_cli.job_kinds"

JobMain = Callable[[list[str]], int]


@dataclass(frozen=True)
class JobKind:
    """One job kind: `load()` imports its module (only when the job runs) and returns its `main(argv) -> int`."""

    load: Callable[[], JobMain]
    keep_traceback: bool = False  # a training attempt: the job wrapper reads the traceback to classify the failure


def command_line(python: str, command: str, args: list[str]) -> list[str]:
    """The argv that runs the job `command` with `args` under `python`."""
    return [python, "-u", "-m", ENTRY_MODULE, command, *args]


def run(kinds: Mapping[str, JobKind], command: str, argv: list[str]) -> int:
    from gspo_cli.errors import GspoError

    if command not in kinds:
        raise GspoError(f"unknown job command {command!r}", f"known: {', '.join(sorted(kinds))}", exit_code=2)
    return int(kinds[command].load()(list(argv)) or 0)


def run_in_process(command: str, argv: list[str]) -> int:
    """Run a registered job kind in this process (`--local`): the registry's `run`, as `python -m` runs it."""
    registry = importlib.import_module(ENTRY_MODULE)  # by name: the registry sits above this layer
    return int(registry.run(command, argv))


def main(kinds: Mapping[str, JobKind], argv: list[str] | None = None) -> int:
    """The job process: load the job's secrets, run its kind; a failure is one line and a hint."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(f"usage: python -m {ENTRY_MODULE} COMMAND [ARGS...]; commands: {', '.join(sorted(kinds))}")
        return 2
    from gspo_cli.jobs import secret_env

    # The job's driver (not the attempts the job wrapper runs, which inherit this) deletes the secrets file when
    # the job ends: Ray workers read it at start until then (secret_env.retire).
    owner = os.environ.setdefault(SECRETS_OWNER_VAR, str(os.getpid())) == str(os.getpid())
    try:
        return _main(kinds, argv)
    finally:
        if owner:
            secret_env.retire(os.environ.get(secret_env.FILE_VAR))


SECRETS_OWNER_VAR = "GSPO_SECRETS_OWNER"


def _main(kinds: Mapping[str, JobKind], argv: list[str]) -> int:
    from gspo_cli.errors import GspoError

    try:
        from gspo_cli.jobs import fault_switches, secret_env

        fault_switches.announce(f"job {argv[0]}")  # a test's fault switch says so in the job's log
        secret_env.load()  # the job's secrets, from its private file (never in Ray's runtime_env)
        return run(kinds, argv[0], argv[1:])
    except GspoError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"Hint: {exc.hint}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:
        # The CLI's rule inside jobs too: one line and a hint, the traceback only with --debug. A training attempt
        # keeps its traceback: the job wrapper reads it to tell a transient failure from a bug.
        kind = kinds.get(argv[0])
        if (kind is not None and kind.keep_traceback) or _debug():
            raise
        text = " ".join(str(exc).split())[:300]
        print(f"Error: {type(exc).__name__}: {text}" if text else f"Error: {type(exc).__name__}", file=sys.stderr)
        print("Hint: an unexpected failure inside the job; rerun with --debug for the traceback", file=sys.stderr)
        return 1


def _debug() -> bool:
    return os.environ.get("GSPO_DEBUG", "") not in ("", "0", "false")


if __name__ == "__main__":  # the wire command of gspo before job kinds moved up: say where it went
    print(f"gspo_cli.jobs.entry is no job entrypoint any more: run python -m {ENTRY_MODULE} COMMAND [ARGS...]",
          file=sys.stderr)
    sys.exit(2)

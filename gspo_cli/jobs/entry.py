"""The entrypoint of every gspo Ray job: `python -m gspo_cli.jobs.entry COMMAND REQUEST.json`.

A Ray job and an in-process (`--local`) run execute exactly this code. Each command maps to a
`module:function` taking the remaining argv (the path of its request file, see `jobs.request`; none for
`cluster-smoke`) and returning an exit code; modules are imported only when run.
"""

from __future__ import annotations

import importlib
import sys

# command name -> "module:function(argv: list[str]) -> int"
COMMANDS: dict[str, str] = {
    "cluster-smoke": "gspo_cli.jobs.smoke:main",
    "eval": "gspo_cli.eval.job:main",
    "prepare-data": "gspo_cli.data.job:main",
    "train": "gspo_cli.engines.native.job:main",
    "train-attempt": "gspo_cli.engines.native.job:attempt_main",
    "verl-train": "gspo_cli.engines.verl.job:job_main",
    "verl-export": "gspo_cli.models.verl_checkpoint:job_main",
}


def run(command: str, argv: list[str]) -> int:
    from gspo_cli.errors import GspoError

    if command not in COMMANDS:
        raise GspoError(f"unknown job command {command!r}", f"known: {', '.join(sorted(COMMANDS))}", exit_code=2)
    module_name, func_name = COMMANDS[command].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    return int(func(list(argv)) or 0)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(f"usage: python -m gspo_cli.jobs.entry COMMAND [ARGS...]; commands: {', '.join(sorted(COMMANDS))}")
        return 2
    from gspo_cli.errors import GspoError

    try:
        from gspo_cli.jobs import secret_env

        secret_env.load()  # the job's secrets, from its private file (never in Ray's runtime_env)
        return run(argv[0], argv[1:])
    except GspoError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"Hint: {exc.hint}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:
        # The CLI's rule inside jobs too: one line and a hint, the traceback only with --debug. A training attempt
        # keeps its traceback: the job wrapper reads it to tell a transient failure from a bug.
        if argv[0] in KEEP_TRACEBACK or _debug():
            raise
        text = " ".join(str(exc).split())[:300]
        print(f"Error: {type(exc).__name__}: {text}" if text else f"Error: {type(exc).__name__}", file=sys.stderr)
        print("Hint: an unexpected failure inside the job; rerun with --debug for the traceback", file=sys.stderr)
        return 1


KEEP_TRACEBACK = ("train-attempt",)


def _debug() -> bool:
    import os

    return os.environ.get("GSPO_DEBUG", "") not in ("", "0", "false")


if __name__ == "__main__":
    sys.exit(main())

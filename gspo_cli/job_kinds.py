"""Every gspo job kind, by explicit dispatch: the job a Ray job (or a `--local` run) executes is

    python -m gspo_cli.job_kinds COMMAND [ARGS...]

Each kind is a loader: a plain import inside a function returning the kind's `main(argv: list[str]) -> int`, so
reading this table imports no service (`gspo --help` stays light) and an IDE follows each entry to its code.
This module sits at the top of the layers (beside `cli/`) because it names services of every layer; the job
machinery it hands the table to (`jobs/entry.py`) sits below them. tests/jobs/test_job_kinds.py checks that every
kind loads to a function of that signature and that every command gspo submits is registered here.
"""

from __future__ import annotations

import sys

from gspo_cli.jobs.entry import JobKind, JobMain
from gspo_cli.jobs.entry import main as _entry_main
from gspo_cli.jobs.entry import run as _entry_run


def _cluster_smoke() -> JobMain:
    from gspo_cli.jobs import smoke

    return smoke.main


def _eval() -> JobMain:
    from gspo_cli.eval import job

    return job.main


def _prepare_data() -> JobMain:
    from gspo_cli.data import job

    return job.main


def _native_train() -> JobMain:
    from gspo_cli.engines.native import job

    return job.main


def _native_train_attempt() -> JobMain:
    from gspo_cli.engines.native import job

    return job.attempt_main


def _verl_train() -> JobMain:
    from gspo_cli.engines.verl import job

    return job.job_main


def _verl_export() -> JobMain:
    from gspo_cli.models import verl_checkpoint

    return verl_checkpoint.job_main


KINDS: dict[str, JobKind] = {
    "cluster-smoke": JobKind(_cluster_smoke),
    "eval": JobKind(_eval),
    "prepare-data": JobKind(_prepare_data),
    "train": JobKind(_native_train),
    "train-attempt": JobKind(_native_train_attempt, keep_traceback=True),
    "verl-train": JobKind(_verl_train),
    "verl-export": JobKind(_verl_export),
}


def run(command: str, argv: list[str]) -> int:
    """Run the job `command` in this process (what `jobs.entry.run_in_process` calls for `--local`)."""
    return _entry_run(KINDS, command, argv)


def main(argv: list[str] | None = None) -> int:
    return _entry_main(KINDS, argv)


if __name__ == "__main__":
    sys.exit(main())

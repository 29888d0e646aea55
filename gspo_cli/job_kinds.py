"""Every gspo job kind, by explicit dispatch: the job a Ray job (or a `--local` run) executes is

    python -m gspo_cli.job_kinds COMMAND [ARGS...]

Each kind is a loader registered with `@job_kind(NAME)` (the registry pattern of gspo_cli/registry.py): a plain
import inside a function returning the kind's `main(argv: list[str]) -> int`, so reading the registry imports no
service (`gspo --help` stays light) and an IDE follows each entry to its code. An engine's jobs are facts of the
engine: its entry in config/engine_registry.py names each (command, `module:function`), registered here from it.
This module sits at the top of the layers (beside `cli/`) because it names services of every layer; the job
machinery it hands the table to (`jobs/entry.py`) sits below them. tests/jobs/test_job_kinds.py checks that every
kind loads to a function of that signature and that every command gspo submits is registered here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

from gspo_cli.config.engine_registry import ENGINES
from gspo_cli.jobs.entry import JobKind, JobMain
from gspo_cli.jobs.entry import main as _entry_main
from gspo_cli.jobs.entry import run as _entry_run
from gspo_cli.registry import Registry

KINDS: Registry[JobKind] = Registry("job kind", key="job command")


def _by_path(target: str) -> Callable[[], JobMain]:
    """A loader of `module:function`, imported only when the job runs."""

    def load() -> JobMain:
        module, _, name = target.partition(":")
        main: JobMain = getattr(importlib.import_module(module), name)
        return main

    return load


# each engine's jobs, as its entry in the engine registry names them (config/engine_registry.py)
for _engine in ENGINES.values():
    for _kind in _engine.job_kinds:
        KINDS.add(_kind.name, JobKind(_by_path(_kind.main), _kind.keep_traceback))


def job_kind(name: str, *, keep_traceback: bool = False) -> Callable[[Callable[[], JobMain]], Callable[[], JobMain]]:
    """Register the decorated loader as job kind `name` (`keep_traceback`: a training attempt, whose wrapper reads
    the traceback to classify the failure)."""
    return KINDS.register_as(name, lambda load: JobKind(load, keep_traceback))


@job_kind("cluster-smoke")
def _cluster_smoke() -> JobMain:
    from gspo_cli.jobs import smoke

    return smoke.main


@job_kind("eval")
def _eval() -> JobMain:
    from gspo_cli.eval import job

    return job.main


@job_kind("prepare-data")
def _prepare_data() -> JobMain:
    from gspo_cli.data import job

    return job.main


def run(command: str, argv: list[str]) -> int:
    """Run the job `command` in this process (what `jobs.entry.run_in_process` calls for `--local`)."""
    return _entry_run(KINDS, command, argv)


def main(argv: list[str] | None = None) -> int:
    return _entry_main(KINDS, argv)


if __name__ == "__main__":
    sys.exit(main())

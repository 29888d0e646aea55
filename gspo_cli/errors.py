"""The one error type of the project: a message, a hint, and an exit code.

Commands raise these; `gspo_cli.cli.main` prints `Error: <message>` and the hint on stderr and exits with
`exit_code`. A traceback is shown only with `--debug` or `GSPO_DEBUG=1`.
"""

from __future__ import annotations


class GspoError(Exception):
    """A failure the user can act on. `exit_code` 2 means bad usage or configuration."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None, *, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class ConfigError(GspoError):
    """A preset, a `--set` override or a command-line value is wrong."""

    exit_code = 2


class DataError(GspoError):
    """An input data file is missing, unreadable or in the wrong schema."""

    exit_code = 2


class ClusterError(GspoError):
    """Ray is unreachable, a job failed, or a job id is unknown."""

    exit_code = 1


def first_line(exc: BaseException, limit: int = 160) -> str:
    """The first line of an error from another library, cut at `limit` characters (for a one-line error)."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return msg if len(msg) <= limit else msg[:limit - 3] + "..."

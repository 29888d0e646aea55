"""The lines of a failed job's log that say why it failed (pure): what `gspo train` prints when a job fails, in
place of the log's last lines (a verl job's log is ~1,000-2,000 lines of Ray, verl and vLLM output, and its last
25 lines are often warnings repeated across the cluster, not the error).

`why_failed(lines)` returns, in log order:
  - the distinct exception lines (`ValueError: ...`, `ray.exceptions.RayTaskError(RuntimeError): ...`), the first
    ones (the root cause: vLLM's worker error comes long before verl's "Engine core initialization failed. See
    root cause above") and the last ones (what ended the job), at most `MAX_ERRORS`;
  - the log's last `LAST_LINES` lines that are not noise (the job wrapper's own last line is there: `verl exited
    with code 1: ...`).
Colour codes are removed and long lines shortened; the full log stays where it was (`gspo jobs logs ID`).
"""

from __future__ import annotations

import re

from gspo_cli.jobs.failures import ERROR_LINE

MAX_ERRORS = 6
LAST_LINES = 4
MAX_CHARS = 300

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Lines that never say why a job failed: warnings (verl's "torchtitan engine is not available:
# ModuleNotFoundError(...)" is a UserWarning), Ray's "[repeated 668x across cluster]" summaries, tqdm bars, verl's
# per-step metric dumps ("step:5 - global_seqlen/min:..."), traceback frames (`File "..."` and the frame's code,
# indented by four) and carets.
NOISE = re.compile(
    r"Warning: |\bWARNING\b|\[repeated \d+x across cluster\]|Training Progress:|\|\S*\| \d+/\d+ \[|"
    r"\bstep:\d+ - |^ {4}\S|^\s*(File \"|raise\b|\^+$|~+$)"
)


def clean(line: str) -> str:
    """Without colour codes and trailing space."""
    return ANSI.sub("", line).rstrip()


def short(line: str) -> str:
    """At most MAX_CHARS characters."""
    return line if len(line) <= MAX_CHARS else line[:MAX_CHARS - 3] + "..."


def _exception(line: str) -> str | None:
    """The exception text of a line (from the exception's name on), None when it shows no exception."""
    if NOISE.search(line):
        return None
    m = ERROR_LINE.search(line)
    return line[m.start():].strip() if m else None


def why_failed(lines: list[str], *, max_errors: int = MAX_ERRORS, last: int = LAST_LINES) -> list[str]:
    """The lines that say why the job failed (see the module doc); empty for an empty log."""
    cleaned = [clean(line) for line in lines]
    errors: dict[str, int] = {}  # exception text -> index of its first line
    for i, line in enumerate(cleaned):
        if (text := _exception(line)) is not None and text not in errors:
            errors[text] = i
    picked = sorted(errors.values())
    if len(picked) > max_errors:
        head = max_errors // 2
        picked = picked[:head] + picked[-(max_errors - head):]
    tail = [i for i, line in enumerate(cleaned) if line.strip() and not NOISE.search(line)][-last:]
    return [short(cleaned[i]) for i in sorted({*picked, *tail})]

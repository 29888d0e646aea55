"""How a job's log is shown (pure): which lines, in which form. One value, chosen by the command that submits the
job (`JobSpec.view`) and recorded in the job's Ray metadata, so that `gspo jobs logs ID [--follow]` shows a job the
way the command that started it did (`gspo train` of verl: a line per step, verl's and vLLM's own output held in the
log) and `--raw` shows the log as Ray stores it.

A job submitted by an older gspo, or by anyone else, has no such entry: it is shown with everything streamed, as
before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

METADATA_KEY = "gspo_view"
_QUIET, _STEPS = "quiet", "steps"


@dataclass(frozen=True)
class ViewMode:
    quiet: bool = False  # the job's own output stays in its log; gspo's events and messages are shown
    step_lines: bool = False  # one plain line per progress event (jobs/steps.py) instead of a bar
    raw: bool = False  # every line as Ray stores it, `@@gspo` events included (a reader's choice, never recorded)

    def metadata(self) -> dict[str, str]:
        words = [w for w, on in ((_QUIET, self.quiet), (_STEPS, self.step_lines)) if on]
        return {METADATA_KEY: ",".join(words)} if words else {}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> ViewMode:
        """The mode a job's metadata records; unknown words are ignored (metadata is the cluster's data)."""
        words = set(str((metadata or {}).get(METADATA_KEY, "")).split(","))
        return cls(quiet=_QUIET in words, step_lines=_STEPS in words)

    @property
    def hides_output(self) -> bool:
        """Whether the job's own lines are held back (then `--raw` is how to read them)."""
        return self.quiet and not self.raw


RAW = ViewMode(raw=True)

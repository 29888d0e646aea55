"""Why a training process ended, and whether the job wrapper should restart it (pure functions).

`classify` sorts a failed attempt into:
  transient  worth a restart from the last complete checkpoint: a stall the wrapper stopped, a node or actor lost,
             an HCCL/NCCL collective timeout or connection error, a process killed by a signal, an out-of-memory
             on a rank after the attempt had completed steps;
  config     never retried: gspo's own configuration/data errors (exit code 2), Hydra/OmegaConf/pydantic
             validation errors, missing files, an out-of-memory before the first step (the layout does not fit);
  stopped    a health rule with action `stop` ended it (never retried: the same run would hit it again);
  fatal      anything else (a Python exception we do not know to be transient): not retried, since a
             deterministic bug would only repeat.
The patterns match the texts these failures print (verl, Ray, torch, HCCL); tests/jobs hold recorded examples.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field

_TRANSIENT = re.compile(
    r"HCCL|NCCL|collective operation timeout|Watchdog caught collective|"
    r"Connection(Reset|Refused|Aborted)?Error|connection (reset|refused|closed)|Broken pipe|"
    r"NodeDiedError|node .{0,60}(died|dead|lost|was terminated)|ActorDiedError|RayActorError|"
    r"actor died unexpectedly|OwnerDiedError|ObjectLostError|GcsRpcError|RaySystemError|"
    r"Socket Timeout|timed out waiting",
    re.IGNORECASE,
)
_OOM = re.compile(r"out of memory|OutOfMemoryError|\bOOM\b", re.IGNORECASE)
_CONFIG = re.compile(
    r"^Error: |ConfigError|DataError|hydra\.errors|ConfigAttributeError|ConfigKeyError|omegaconf\.errors|"
    r"ValidationError|FileNotFoundError|No such file or directory|Could not override",
    re.IGNORECASE | re.MULTILINE,
)
_ERROR_LINE = re.compile(r"\b(\w+\.)*\w*(Error|Exception)(\(\w+\))?: ")


@dataclass
class Attempt:
    """One run of the training process, as the summary and health.jsonl record it."""

    number: int  # 1-based
    resume_step: int | None
    first_step: int | None = None
    last_step: int | None = None
    code: int | None = None
    kind: str = ""
    cause: str = ""
    excerpt: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def steps(self) -> int:
        if self.first_step is None or self.last_step is None:
            return 0
        return self.last_step - self.first_step + 1

    def summary(self) -> str:
        done = f"steps {self.first_step}-{self.last_step}" if self.steps else "no step"
        start = f"from step {self.resume_step}" if self.resume_step else "from the start"
        return (f"attempt {self.number} ({start}): {done}, exit code {self.code}, {self.kind}: {self.cause} "
                f"({self.wall_s:.1f}s)")


def last_error(lines: list[str]) -> str:
    """The newest line that looks like a Python exception, else the newest non-empty line."""
    for line in reversed(lines):
        if m := _ERROR_LINE.search(line):
            return line[m.start():].strip()
    return next((line.strip() for line in reversed(lines) if line.strip()), "")


def classify(code: int, lines: list[str], *, stopped_by: str | None = None, made_progress: bool = False
             ) -> tuple[str, str]:
    """(kind, cause) of a failed attempt; `lines` is the tail of its log, `stopped_by` the rule that made the
    wrapper stop it (None when it ended by itself)."""
    text = "\n".join(lines)
    if stopped_by == "stall":
        return "transient", "stalled (no new step); stopped by the wrapper"
    if stopped_by:
        return "stopped", f"health rule {stopped_by} stopped the run"
    if code == 2:
        return "config", f"configuration or data error: {last_error(lines)}"
    if _OOM.search(text):
        if made_progress:
            return "transient", f"out of memory after steps had completed: {last_error(lines)}"
        return "config", f"out of memory before the first step (the layout does not fit): {last_error(lines)}"
    if m := _TRANSIENT.search(text):
        return "transient", f"communication or node failure ({m.group(0)}): {last_error(lines)}"
    if code < 0 or code in (128 + signal.SIGKILL, 128 + signal.SIGTERM):
        number = -code if code < 0 else code - 128
        return "transient", f"killed by signal {signal.Signals(number).name}"
    if _CONFIG.search(text):
        return "config", last_error(lines)
    return "fatal", last_error(lines) or f"exit code {code}"


def backoff_s(consecutive: int, base_s: float, max_s: float) -> float:
    """Seconds to wait before the `consecutive`-th restart in a row without progress (1-based)."""
    return min(max_s, base_s * 2 ** max(0, consecutive - 1))

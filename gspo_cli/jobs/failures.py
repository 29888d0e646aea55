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
Failures with a known cause are matched first (`SIGNATURES`: ids of gspo_cli/signatures.py, docs/failures.md)
and say their cause and fix; `silent_exit` catches an exit 0 that ran no step.
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
# A Python exception line (`ValueError: ...`, `ray.exceptions.RayTaskError(RuntimeError): ...`): also jobs/log_excerpt.py
ERROR_LINE = re.compile(r"\b(\w+\.)*\w*(Error|Exception)(\(\w+\))?: ")
# Ray's memory monitor killed the worker (ray.exceptions.OutOfMemoryError). Not "OOM killer": Ray's generic
# ActorDiedError text lists "(1) the process was killed by the OOM killer" as a possible cause in every case.
_HOST_OOM = re.compile(r"ray\.exceptions\.OutOfMemoryError|node running low on memory|NODE_OUT_OF_MEMORY")

# (signature id, pattern, kind, cause and fix). First match wins; all are checked before the generic classes.
SIGNATURES: tuple[tuple[str, re.Pattern, str, str], ...] = (
    ("run-hccl-stale-process", re.compile(r"Maybe the last training process is running"), "config",
     "HCCL could not start: a process of an earlier run still holds the NPU; fix: `gspo env doctor` names the "
     "PIDs, stop them, wait 10 s, rerun"),
    ("run-hccl-init", re.compile(r"hcclCommInitRootInfo(Config)?\("), "config",
     "the ranks could not build the HCCL communicator (restarting repeats it); fix: `gspo env doctor --cluster` "
     "(device NIC links, CANN versions, stale processes), HCCL_SOCKET_IFNAME / HCCL_IF_IP on the interface the "
     "nodes reach each other on"),
    ("run-npu-oom-sleep", re.compile(r"(?s)(wake_up|, in sleep\b).*NPU out of memory|NPU out of memory.*(wake_up|, in sleep\b)"),
     "config", "NPU out of memory around vLLM-Ascend's sleep/wake_up: sleep mode did not give the rollout's memory "
     "back (restarting repeats it); fix: lower rollout.gpu_memory_utilization, set "
     "PYTORCH_NPU_ALLOC_CONF=expandable_segments:False, use a vllm-ascend with the sleep-mode memory fixes"),
    ("run-nz-wake-up", re.compile(r"FRACTAL_NZ mode is enabled"), "config",
     "vLLM-Ascend's wake_up refuses the FRACTAL_NZ weight format (restarting repeats it); fix: set "
     "env.vars.VLLM_ASCEND_ENABLE_NZ: \"0\" and unset it on the nodes"),
    ("run-hccl-timeout", re.compile(r"EI0006|Getting socket times out|Hccl\w+, error code is"), "transient",
     "an HCCL collective timed out (a rank stopped answering); restarting from the last checkpoint; if it "
     "repeats, raise HCCL_EXEC_TIMEOUT / HCCL_CONNECT_TIMEOUT and find the rank that failed first"),
    # ActorUnavailableError: the actor's node is gone (Ray has not yet declared it dead), seen when a node is lost
    ("run-ray-actor-died", re.compile(r"ActorDiedError|The actor died unexpectedly|RayActorError|"
                                      r"ActorUnavailableError"), "transient",
     "a Ray actor (trainer rank or rollout server) died or its node is unreachable; restarting from the last "
     "checkpoint"),
)


def known_failure(lines: list[str]) -> tuple[str, str, str] | None:
    """(signature id, kind, cause with fix) of the first known failure in the log tail, or None."""
    text = "\n".join(lines)
    for sig_id, pattern, kind, cause in SIGNATURES:
        if pattern.search(text):
            if sig_id == "run-ray-actor-died" and _HOST_OOM.search(text):
                return sig_id, "config", ("a Ray actor was killed for host memory (Ray's memory monitor / the OOM "
                                           "killer); restarting repeats it; fix: lower host memory use (actor "
                                           "offload, fewer workers) or give the node more memory")
            return sig_id, kind, cause
    return None


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
        if m := ERROR_LINE.search(line):
            return line[m.start():].strip()
    return next((line.strip() for line in reversed(lines) if line.strip()), "")


def _without_guesses(lines: list[str]) -> str:
    """The log without Ray's lists of possible causes ("Possible reasons include: (1) SIGKILL by the user or
    system OOM killer, ..." when a raylet ends): naming the OOM killer as a guess is not an out-of-memory."""
    return "\n".join(line for line in lines if "Possible reasons include" not in line)


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
    if known := known_failure(lines):
        sig_id, kind, cause = known
        return kind, f"{cause}: {last_error(lines)} [{sig_id}]"
    if _OOM.search(_without_guesses(lines)):
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


def silent_exit(attempt: Attempt, total_steps: int | None, best_step: int | None) -> tuple[str, str] | None:
    """An attempt that exited 0 without a new step while the run is short of `total_steps`: (kind, cause), else
    None [run-resume-no-step]. verl exits 0 when its dataloader yields nothing (an epoch-boundary resume, verl#7401
    / #5725) or its epochs run out before total_training_steps (verl#5013)."""
    if attempt.code != 0 or attempt.steps > 0 or not total_steps:
        return None
    reached = max(s for s in (best_step, attempt.resume_step, 0) if s is not None)
    if reached >= total_steps:
        return None
    return "config", (f"the training process exited 0 without running a step (from step {reached} of {total_steps}): "
                      "verl's dataloader yielded nothing (a resume at an epoch boundary, verl#7401/#5725) or the "
                      "epochs ran out before total_training_steps (verl#5013); fix: raise trainer.total_epochs, "
                      "or resume from the previous checkpoint [run-resume-no-step]")


def backoff_s(consecutive: int, base_s: float, max_s: float) -> float:
    """Seconds to wait before the `consecutive`-th restart in a row without progress (1-based)."""
    return min(max_s, base_s * 2 ** max(0, consecutive - 1))

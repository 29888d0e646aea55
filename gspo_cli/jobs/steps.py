"""A training job's progress as one plain line per step (pure; `jobs/view.py` prints them).

The job wrapper (jobs/supervise.py) turns each metrics.jsonl line into a progress event whose `metrics` carry short
labels (verl: engines/verl/job.PROGRESS_METRICS; native: score / acc / val_acc). A terminal that is not a TTY (a
log file, `| tee`, CI) cannot redraw a progress bar, so it saw gspo's progress only when the bar stopped; a line
per step reads the same everywhere:

    step 5/24  reward -0.109  resp_len 2.0  step 2.9s  ETA 55s

The ETA is the mean of the newest `ETA_WINDOW` step times times the steps left, from the steps' own `step_s`
(not wall time), so a replayed log (`gspo jobs logs ID`) shows the ETA the run had then.
"""

from __future__ import annotations

from collections import deque
from typing import Any

ETA_WINDOW = 5

# label -> (shown name, format); the order of the line. Labels not listed follow as `name=value`.
_SHOWN: dict[str, tuple[str, str]] = {
    "reward": ("reward", "{:+.3f}"),
    "score": ("reward", "{:+.3f}"),  # the native engine's label for critic/score/mean
    "acc": ("acc", "{:.3f}"),
    "val_acc": ("val acc", "{:.3f}"),
    "resp_len": ("resp_len", "{:.1f}"),
    "step_s": ("step", "{:.1f}s"),
}
_LEFT_OUT = {"clipfrac"}  # in the metrics file and the health rules; not needed on the line


def duration(seconds: float) -> str:
    """`42s`, `3m05s`, `2h07m`."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class StepLines:
    """Progress events in, one line each out; keeps the step times for the ETA."""

    def __init__(self) -> None:
        self.step_times: deque[float] = deque(maxlen=ETA_WINDOW)

    def eta_s(self, step: int, total: int | None) -> float | None:
        if not total or not self.step_times or step >= total:
            return None
        return sum(self.step_times) / len(self.step_times) * (total - step)

    def line(self, event: dict[str, Any]) -> str:
        step, total = int(event.get("step") or 0), event.get("total")
        metrics = event.get("metrics") or {}
        if (step_s := _number(metrics.get("step_s"))) is not None:
            self.step_times.append(step_s)
        head = f"step {step}/{total}" if total else f"step {step}"
        if step == 0:
            head += " (validation before training)"
        parts = [head]
        for label, (name, fmt) in _SHOWN.items():
            if (value := _number(metrics.get(label))) is not None:
                parts.append(f"{name} {fmt.format(value)}")
        for label, value in metrics.items():
            if label not in _SHOWN and label not in _LEFT_OUT and (number := _number(value)) is not None:
                parts.append(f"{label}={number:.4g}")
        if (eta := self.eta_s(step, total)) is not None:
            parts.append(f"ETA {duration(eta)}")
        return "  ".join(parts)

"""The native engine's trackers: the step dict metrics.jsonl gets also goes to TensorBoard, W&B and SwanLab, the way
verl's Tracking writes them (verl/utils/tracking.py), so a metric has the same name on both engines.

`TrackedMetrics` is the trainer's metrics writer (metrics.jsonl, gspo_cli/metrics/jsonl.py) plus the trackers of
`trainer.loggers`: `log(step, data)` writes the line, then each tracker; `close()` finishes them. Where each writes,
its mode and the run's project / experiment names come from config/trackers.py (the same values a verl job gets
as TENSORBOARD_DIR, WANDB_MODE / WANDB_DIR, SWANLAB_MODE / SWANLAB_LOG_DIR). Each tracker gets the preset as its
config with secret env.vars redacted, as run folders keep it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.config import trackers
from gspo_cli.layout import metrics_file
from gspo_cli.metrics.jsonl import MetricsWriter

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


def _numbers(data: dict[str, Any]) -> dict[str, float]:
    """The scalars of a step (verl's loggers get only numbers; NaN and inf stay out, as in metrics.jsonl)."""
    return {k: float(v) for k, v in data.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


class _TensorBoard:
    def __init__(self, preset: Preset, run_dir: Path, config: dict) -> None:
        from torch.utils.tensorboard import SummaryWriter  # what verl's _TensorboardAdapter writes with

        self.writer = SummaryWriter(str(trackers.folder(run_dir, "tensorboard")))

    def log(self, data: dict[str, float], step: int) -> None:
        for key, value in data.items():
            self.writer.add_scalar(key, value, step)

    def finish(self) -> None:
        self.writer.close()


class _Wandb:
    def __init__(self, preset: Preset, run_dir: Path, config: dict) -> None:
        import wandb

        self.run = wandb.init(project=preset.trainer.project_name, name=trackers.experiment(preset, run_dir),
                              config=config, dir=str(run_dir), mode=trackers.mode(preset, "wandb"),
                              settings=wandb.Settings(silent=True, console="off"))

    def log(self, data: dict[str, float], step: int) -> None:
        self.run.log(data, step=step)

    def finish(self) -> None:
        self.run.finish()


class _Swanlab:
    def __init__(self, preset: Preset, run_dir: Path, config: dict) -> None:
        import os

        import swanlab

        if trackers.mode(preset, "swanlab") == "online" and os.environ.get("SWANLAB_API_KEY"):
            swanlab.login(os.environ["SWANLAB_API_KEY"])  # as verl does; offline never logs in
        self.swanlab = swanlab
        swanlab.init(project=preset.trainer.project_name, experiment_name=trackers.experiment(preset, run_dir),
                     config={"FRAMEWORK": "gspo-native", **config},
                     logdir=str(trackers.folder(run_dir, "swanlab")), mode=trackers.mode(preset, "swanlab"))

    def log(self, data: dict[str, float], step: int) -> None:
        self.swanlab.log(data, step=step)

    def finish(self) -> None:
        self.swanlab.finish()


WRITERS = {"tensorboard": _TensorBoard, "wandb": _Wandb, "swanlab": _Swanlab}


class TrackedMetrics(MetricsWriter):
    """metrics.jsonl of `run_dir` and the preset's trackers, opened here (a missing package: one ConfigError)."""

    def __init__(self, preset: Preset, run_dir: Path) -> None:
        super().__init__(metrics_file(run_dir))
        self.preset, self.run_dir = preset, Path(run_dir)
        trackers.raise_if_missing(preset, trackers.missing_here(preset))
        self.writers: list[Any] | None = None  # opened at the first step (a complete run opens none)

    def _open(self) -> list[Any]:
        import os

        from gspo_cli.config.schema import to_jsonable
        from gspo_cli.jobs.secret_env import redact_preset

        # the variables a verl job gets, in this process too: wandb's service reads WANDB_MODE from the environment
        # when it starts (with only init's mode="offline" it still looked up its API host: a DNS query, seen in strace)
        os.environ.update(trackers.env(self.preset, self.run_dir))
        config = redact_preset(to_jsonable(self.preset))
        return [WRITERS[t.name](self.preset, self.run_dir, config) for t in trackers.used(self.preset)]

    def log(self, step: int, data: dict) -> None:
        super().log(step, data)
        if self.writers is None:
            self.writers = self._open()
        numbers = _numbers(data)
        for writer in self.writers:
            writer.log(numbers, step)

    def __enter__(self) -> TrackedMetrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        writers, self.writers = self.writers or [], None
        for writer in writers:
            writer.finish()

"""Job side of native training.

`python -m gspo_cli.job_kinds train RUN_DIR/train_request.json` is the job: it runs the trainer as a child
process (`train-attempt`, same request file) under the job wrapper (gspo_cli/jobs/supervise.py), which passes the trainer's
progress through, applies the health rules to metrics.jsonl, catches stalls, and restarts the trainer from its last
checkpoint on transient failures (the trainer resumes by itself: trainer.resume_mode auto).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gspo_cli.jobs.entry import command_line

ATTEMPT_COMMAND = "train-attempt"


def _request(argv: list[str]) -> dict:
    """The job's request file (engines/native/launch.entry_args): {"config": config.json, "run_dir": ...}."""
    from gspo_cli.jobs import request as job_request

    return job_request.read(argv, "train")


def _load(config: str):
    from gspo_cli.config.schema import Preset
    from gspo_cli.errors import ConfigError

    try:
        preset = Preset.model_validate(json.loads(Path(config).read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the run config {config}: {exc}") from None
    if preset.trainer.engine != "native":
        raise ConfigError(f"the train job runs the native engine; this preset uses {preset.trainer.engine!r}")
    return preset


def main(argv: list[str]) -> int:
    """The job: the trainer under the wrapper."""
    from gspo_cli import layout
    from gspo_cli.jobs.supervise import Child, supervise
    from gspo_cli.metrics.jsonl import MetricsWriter

    req = _request(argv)
    preset = _load(req["config"])
    run_dir = Path(req["run_dir"])
    metrics = layout.metrics_file(run_dir)

    def last_checkpoint() -> int | None:
        steps = layout.list_steps(run_dir)
        return steps[-1] if steps else None

    def before_attempt(index: int, resume_step: int | None) -> None:
        # The trainer drops the metric lines after the checkpoint it resumes from; doing it first keeps the
        # wrapper's tail of the file from reading those steps twice.
        if preset.trainer.resume_mode == "auto" or index > 0:
            last = last_checkpoint()
            MetricsWriter(metrics).truncate_after(last if last is not None else -1)

    def command(index: int, resume_step: int | None) -> list[str]:
        return command_line(sys.executable, ATTEMPT_COMMAND, argv)

    child = Child(name="native trainer", run_dir=run_dir, metrics=metrics, command=command, cwd=Path.cwd(),
                  before_attempt=before_attempt, resume_step=last_checkpoint,
                  total_steps=preset.trainer.total_training_steps)  # an exit 0 short of it is a failure
    from gspo_cli.runs import state

    # job_state.json: running, then how it ended (`gspo runs list`)
    return state.run_tracked(run_dir, "native", lambda: supervise(
        child, preset, on_failure=lambda kind, cause: state.note_failure(run_dir, kind, cause)))


def attempt_main(argv: list[str]) -> int:
    """One attempt: the trainer in this process (resuming from the run's last checkpoint, if any)."""
    req = _request(argv)
    preset = _load(req["config"])
    from gspo_cli.engines.native.faults import with_faults
    from gspo_cli.engines.native.trainer import NativeTrainer, train

    return train(preset, Path(req["run_dir"]), with_faults(NativeTrainer))

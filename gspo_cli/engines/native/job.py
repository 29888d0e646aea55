"""Job side of native training: `python -m gspo_cli.jobs.entry train RUN_DIR/train_request.json`."""

from __future__ import annotations

import json
from pathlib import Path


def main(argv: list[str]) -> int:
    from gspo_cli.config.schema import Preset
    from gspo_cli.errors import ConfigError
    from gspo_cli.jobs import request as job_request

    req = job_request.read(argv, "train")
    try:
        preset = Preset.model_validate(json.loads(Path(req["config"]).read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the run config {req['config']}: {exc}") from None
    if preset.trainer.engine != "native":
        raise ConfigError(f"the train job runs the native engine; this preset uses {preset.trainer.engine!r}")
    from gspo_cli.engines.native.trainer import train
    from gspo_cli.runs import state

    run_dir = Path(req["run_dir"])
    # job_state.json: what `gspo runs list` reads for running / failed / killed
    return state.run_tracked(run_dir, "native", lambda: train(preset, run_dir))

"""Job side of native training: `python -m gspo_cli.jobs.entry train --config C --run-dir D`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="gspo_cli.jobs.entry train")
    parser.add_argument("--config", required=True, help="resolved preset as JSON (written by gspo train)")
    parser.add_argument("--run-dir", required=True)
    args = parser.parse_args(argv)

    from gspo_cli.config.schema import Preset
    from gspo_cli.errors import ConfigError

    try:
        preset = Preset.model_validate(json.loads(Path(args.config).read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the run config {args.config}: {exc}") from None
    if preset.trainer.engine != "native":
        raise ConfigError(f"the train job runs the native engine; this preset uses {preset.trainer.engine!r}")
    from gspo_cli.engines.native.trainer import train
    from gspo_cli.runs import state

    run_dir = Path(args.run_dir)
    # job_state.json: what `gspo runs list` reads for running / failed / killed
    return state.run_tracked(run_dir, "native", lambda: train(preset, run_dir))

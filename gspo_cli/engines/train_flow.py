"""What `gspo train` does between its options and the engine: the preset (--preset, else the saved one of the run
--resume continues), the visible trust line, the `TrainRequest`, and the preset's engine's launcher."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gspo_cli.engines.request import TrainRequest
from gspo_cli.errors import ConfigError


def train(preset: str | None, sets: list[str], *, resume: str | None, plan_line: Callable[..., str],
          **flags: Any) -> int:
    """Run (or --dry-run) the preset's engine; its exit code. `plan_line`: gspo plan's one-line prediction for the
    verl dry-run, handed in by the CLI (the planner sits above the engines). `flags`: the rest of `TrainRequest`."""
    from gspo_cli.config import presets, trust
    from gspo_cli.engines import get_engine

    if resume and not preset:
        from gspo_cli.engines.verl.launch import saved_config

        preset = str(saved_config(resume))  # the run's resolved preset
    if not preset:
        raise ConfigError("no preset given", "pass --preset NAME (see `gspo presets list`) or --resume RUN")
    loaded = presets.load(preset, sets)  # fail fast on a bad preset or --set, before any job
    trusted = trust.say(loaded)  # the visible line, both engines, run or dry-run
    req = TrainRequest(preset=loaded.preset, preset_ref=preset, sets=sets, resume=resume, plan_line=plan_line,
                       trust_remote_code=trusted, **flags)
    return get_engine(loaded.preset.trainer.engine)(req)

"""Training engines, looked up by `trainer.engine` in the preset. Imported lazily: no torch/verl at import time.

An engine is a launcher `launch(req: TrainRequest) -> int`: it turns a `gspo train` request into a run folder
and a job (a Ray job, or in-process with `--local`) and returns the exit code. `gspo train` only loads the
preset, looks its engine up here and calls the launcher.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gspo_cli.errors import ConfigError

# trainer.engine -> "module:function(req: TrainRequest) -> int"
ENGINES: dict[str, str] = {
    "native": "gspo_cli.engines.native.launch:launch",
    "verl": "gspo_cli.engines.verl.launch:launch_request",
}


@dataclass
class TrainRequest:
    """What `gspo train` was asked: the loaded preset plus the flags (engines ignore flags they do not use)."""

    preset: Any  # gspo_cli.config.schema.Preset, already resolved with --set
    preset_ref: str  # the name or path given, so a job can reload it
    sets: list[str] = field(default_factory=list)
    run_name: str | None = None
    local: bool = False
    address: str | None = None
    json_out: bool = False
    follow: bool = True
    dry_run: bool = False
    resume: str | None = None
    # (preset, preflight report) -> gspo plan's one-line prediction for the verl dry-run; the CLI passes
    # gspo_cli.plan.dry_run_line (the planner imports the engines' preflight, so the engines cannot import it)
    plan_line: Callable[[Any, Any], str] | None = None


def get_engine(name: str) -> Callable:
    try:
        target = ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown trainer.engine {name!r}", f"use one of: {', '.join(sorted(ENGINES))}") from None
    module_name, func_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise ConfigError(f"engine {name!r} is not available in this install ({module_name} missing)") from None
        raise
    func = getattr(module, func_name, None)
    if func is None:
        raise ConfigError(f"engine {name!r} has no launcher {target} in this version")
    return func

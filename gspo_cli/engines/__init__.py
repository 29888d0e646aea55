"""Training engines, looked up by `trainer.engine` in the preset: one spec per engine (engines/spec.py), registered
in `ENGINES`. Cheap to import: the specs import no torch, Ray or verl; an engine's code loads when its launcher is
asked for.

An engine's `launcher()` is a `Launcher`: `launch(req: TrainRequest) -> int` turns a `gspo train` request into a
run folder and a job (a Ray job, or in-process with `--local`) and returns the exit code. `gspo train` only loads
the preset, looks its engine up here and calls the launcher. Adding an engine: a spec module registering its
`EngineSpec` (imported below) and an entry in config/engine_support.ENGINES (tests/engines/test_engine_registry.py
checks both and the launcher's signature).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.engines.native import spec as _native_spec  # noqa: F401 - registers the native engine
from gspo_cli.engines.request import Launcher, TrainRequest
from gspo_cli.engines.spec import ENGINES, EngineSpec
from gspo_cli.engines.verl import spec as _verl_spec  # noqa: F401 - registers the verl engine
from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.spec import Environment
    from gspo_cli.jobs.resources import NodeResources

__all__ = ["ENGINES", "EngineSpec", "Launcher", "TrainRequest", "environment", "get_engine", "node_resources",
           "spec_for"]


def spec_for(preset: Preset) -> EngineSpec:
    """The spec of the preset's `trainer.engine`."""
    return ENGINES.lookup(preset.trainer.engine)


def node_resources(preset: Preset | None) -> NodeResources:
    """What a Ray node (the embedded head, `cluster up/join`) must offer the jobs of `preset`'s engine."""
    from gspo_cli.jobs.resources import NodeResources

    return spec_for(preset).node_resources(preset) if preset is not None else NodeResources()


def environment(preset: Preset, python: str | None = "") -> Environment:
    """What the preset's engine needs of the interpreter its job runs with ("": this one), and what that lacks."""
    return spec_for(preset).environment(preset, python=python)


def get_engine(name: str) -> Launcher:
    spec = ENGINES.lookup(name)
    try:
        return spec.launcher()
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] != "gspo_cli":
            raise ConfigError(f"engine {name!r} is not available in this install ({exc.name} missing)") from None
        raise

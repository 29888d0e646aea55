"""The native engine's spec (gspo_cli/engines/spec.py): one process, one device, HF transformers.

It places no placement groups (a job is one Ray task), asks a node for nothing beyond what Ray counts, and decides
its device inside the job (`trainer.device`: npu > cuda > cpu when `auto`, models/device.py), so it has no
cluster need. The planner sees it as unsharded, generating with the trained model object itself.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from gspo_cli.engines.spec import EngineSpec, Environment, Missing, PlannerHooks, Probe, register_engine

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import Launcher

NAME = "native"
MODULES = ("torch", "transformers")


class NativeSpec(EngineSpec):
    def launcher(self) -> Launcher:
        from gspo_cli.engines.native.launch import launch

        return launch

    def environment(self, preset: Preset, *, python: str | None = "", probe: Probe | None = None) -> Environment:
        """torch and transformers (the `train` extra), probed in a subprocess of `python` (env/stack_probe.py)."""
        needs, fix = "torch and transformers", "pip install 'gspo[train]'"
        if python is None:
            return Environment(NAME, needs, fix, None)
        python = python or sys.executable
        if probe is None:
            from gspo_cli.env.stack_probe import probe_needs

            probe = probe_needs
        facts = probe(python, modules=MODULES)
        if facts.get("error"):
            missing: tuple[Missing, ...] = (Missing("a working interpreter", str(facts["error"]), fix),)
        else:
            missing = tuple(Missing(m, "the native engine trains with torch and HF transformers", fix, m)
                            for m in MODULES if (facts.get("modules") or {}).get(m) is None)
        return Environment(NAME, needs, fix, python, missing, blocking=True,
                           seconds=float(facts.get("seconds") or 0.0))


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

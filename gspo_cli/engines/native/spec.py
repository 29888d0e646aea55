"""The native engine's spec (gspo_cli/engines/spec.py): one process, one device, HF transformers; its facts are
its entry in config/engine_registry.py, which names this class.

It places no placement groups (a job is one Ray task), asks a node for nothing beyond what Ray counts, and decides
its device inside the job (`trainer.device`: npu > cuda > cpu when `auto`, models/device.py), so it has no
cluster need.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gspo_cli.engines.spec import EngineSpec, Environment, Missing, Probe

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import Launcher

MODULES = ("torch", "transformers")


class NativeSpec(EngineSpec):
    def launcher(self) -> Launcher:
        from gspo_cli.engines.native.launch import launch

        return launch

    def environment(self, preset: Preset, *, python: str | None = "", probe: Probe | None = None) -> Environment:
        """torch and transformers (the `train` extra), probed in a subprocess of `python` (env/stack_probe.py)."""
        needs, fix = "torch and transformers", "pip install 'gspo[train]'"
        if python is None:
            return Environment(self.name, needs, fix, None)
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
        return Environment(self.name, needs, fix, python, missing, blocking=True,
                           seconds=float(facts.get("seconds") or 0.0))

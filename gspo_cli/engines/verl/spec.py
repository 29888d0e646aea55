"""The verl engine's answers about devices and the cluster (the engine spec, gspo_cli/engines/spec.py).

verl places its trainer ranks in one placement group per node of `{<resource>: 1, CPU: 3}` bundles (verl
single_controller/ray/base.py `RayResourcePool.get_placement_groups`, the resource being the platform's
`ray_resource_name()`), so a job of `cluster.nnodes` x `cluster.devices_per_node` needs that many slots of that
resource, on that many nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.config import devices
from gspo_cli.jobs.capacity import Need

if TYPE_CHECKING:
    from gspo_cli.config.devices import Device
    from gspo_cli.config.schema import Preset


def ray_resource(device: Device) -> str:
    """The Ray resource verl's bundles ask for on `device`: the device's own (NPU, GPU); on CPU, gspo's platform
    plugin offers each CPU "device" as a slot of cuda's resource (engines/verl/cpu_platform.py
    `ray_resource_name`: verl's resource check counts only GPU/NPU)."""
    return device.ray_resource or str(devices.get("cuda").ray_resource)


def cluster_need(preset: Preset) -> Need:
    """What a verl job of `preset` (its `cluster.device` already resolved) needs from the cluster."""
    return Need(ray_resource(devices.get(preset.cluster.device)), preset.cluster.nnodes,
                preset.cluster.devices_per_node)

"""What a Ray node must offer a verl job on CPU: the embedded head and `cluster up/join` of a CPU preset ask the
verl spec (engines/verl/spec.py `node_resources`), which answers from here.

- device slots: verl places each trainer rank in a placement-group bundle of `{<resource>: 1, CPU: 3}` and its
  resource check counts only GPU/NPU (verl/single_controller/ray/base.py `get_placement_groups`,
  `_check_resource_available`); gspo's CPU platform plugin (platform.py `ray_resource_name`) names cuda's Ray
  resource, so a node offers one logical slot of it per CPU "device" (`ray start --num-gpus=N`). CPU torch
  ignores the CUDA_VISIBLE_DEVICES Ray sets.
- logical CPUs: those bundles (3 CPUs per device, `max_colocate_count`) plus verl's TaskRunner, TransferQueue and
  reward-loop actors ask for more CPUs than a 2-core host has; Ray oversubscribes logical CPUs.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gspo_cli.config import devices
from gspo_cli.jobs.resources import NodeResources

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

# the Ray resource of one CPU "device": cuda's, the kind verl assumes (verl knows only Ray's accelerator names)
SLOT = devices.verl_default()
SLOT_RESOURCE = str(SLOT.ray_resource)
SLOT_VISIBLE_VAR = str(SLOT.visible_devices_var)
LOGICAL_CPUS = 16


def node_resources(preset: Preset) -> NodeResources:
    return NodeResources(num_cpus=max(os.cpu_count() or 1, LOGICAL_CPUS),
                         resources={SLOT_RESOURCE: float(preset.cluster.devices_per_node)},
                         why=f"a verl CPU run of {preset.name} places its {preset.cluster.devices_per_node} CPU "
                             f"device(s) on Ray {SLOT_RESOURCE} slots")

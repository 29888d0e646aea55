"""Ray resources as gspo hands them to Ray: what a node offers at `ray start` beyond what Ray counts itself, and
how an actor asks for devices.

Which resources an engine's jobs need is the engine's answer (its spec, gspo_cli/engines/spec.py
`node_resources`), and which resource a device is, the device table's (config/devices.py); this module only
spells them the way Ray takes them. Ray's built-in resources have their own `ray start` flags and actor options
(`--num-cpus` / `num_cpus`, `--num-gpus` / `num_gpus`: Ray refuses them inside `--resources` / `resources`);
every other resource (NPU, custom ones) goes into `--resources` / `resources`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Ray's built-in resources -> (`ray start` flag, actor/task option); ray/scripts/scripts.py `ray start`,
# ray/_private/ray_option_utils.py (`resources` must not hold CPU or GPU).
_BUILT_IN: dict[str, tuple[str, str]] = {"CPU": ("--num-cpus", "num_cpus"), "GPU": ("--num-gpus", "num_gpus")}


@dataclass(frozen=True)
class NodeResources:
    """What a Ray node (the embedded head, a `cluster up/join` node) offers for the jobs an engine runs, beyond
    the devices Ray or gspo count themselves; `why` says what asks for it (shown when a running head lacks it)."""

    num_cpus: int | None = None  # logical CPUs (None: Ray counts the cores)
    resources: dict[str, float] = field(default_factory=dict)  # resource -> count, e.g. {"GPU": 2}
    why: str = ""

    def __bool__(self) -> bool:
        return self.num_cpus is not None or bool(self.resources)

    def start_args(self, *, num_cpus: int | None = None) -> list[str]:
        """`ray start` arguments; `num_cpus` (the user's `--num-cpus`) wins over this one's."""
        args = []
        cpus = num_cpus if num_cpus is not None else self.num_cpus
        if cpus is not None:
            args.append(f"--num-cpus={cpus}")
        custom: dict[str, float] = {}
        for name, count in self.resources.items():
            if name in _BUILT_IN:
                args.append(f"{_BUILT_IN[name][0]}={count:g}")
            else:
                custom[name] = int(count) if float(count).is_integer() else count  # {"NPU": 16}, as Ray shows it
        if custom:
            args.append("--resources=" + json.dumps(custom))
        return args

    def missing_from(self, offered: Mapping[str, float]) -> dict[str, float]:
        """The resources of this one that `offered` (a node's resources) lacks, with the count wanted."""
        return {name: count for name, count in self.resources.items() if float(offered.get(name, 0)) < count}

    def to_json(self) -> dict[str, Any]:
        return {"num_cpus": self.num_cpus, "resources": dict(self.resources)}


def actor_options(resource: str | None, count: float) -> dict[str, Any]:
    """The Ray actor/task options that ask for `count` of `resource` (None: nothing)."""
    if resource is None:
        return {}
    if resource in _BUILT_IN:
        return {_BUILT_IN[resource][1]: count}
    return {"resources": {resource: count}}

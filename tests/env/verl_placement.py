"""verl's own placement of a job's workers, run as a Ray driver against a cluster: the placement oracle of the
simulated-cluster tests (tests/env/simulated_cluster.py).

    python verl_placement.py DEVICE POOLS_JSON TIMEOUT_S      (RAY_ADDRESS and the cluster's token in the env)

DEVICE is npu or cuda: verl's platform class of that device is installed as verl's platform (verl's own
`PlatformNPU` / `PlatformCUDA`, whose `ray_resource_name()` decides the bundles' resource; their `is_available()`
would need a real device, which is why the instance is set rather than detected). POOLS_JSON is the job's resource
pools (pool -> processes per node, gspo_cli/engines/verl/cluster.py `resource_pools`). Then verl's
`ResourcePoolManager.create_resource_pool` (its `_check_resource_available` count) and each pool's
`get_placement_groups` (STRICT_PACK groups of `{resource: 1, CPU: 3}` bundles, `ray.get(pg.ready())`) run as in a
verl job. Prints one JSON line: placed or not, why, the bundle, and the nodes the groups landed on. The groups
go when the driver exits.
"""

from __future__ import annotations

import json
import os
import sys
import threading


def _say(**out) -> None:
    print("@@placement " + json.dumps(out), flush=True)


def main() -> None:
    device, pools, timeout = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
    from verl.plugin.platform.platform_manager import set_platform

    if device == "npu":
        from verl.plugin.platform.platform_npu import PlatformNPU as Platform
    else:
        from verl.plugin.platform.platform_cuda import PlatformCUDA as Platform  # type: ignore[assignment]
    set_platform(Platform())
    import ray

    ray.init(address=os.environ["RAY_ADDRESS"], logging_level="ERROR", log_to_driver=False)
    from verl.single_controller.ray.base import ResourcePoolManager

    manager = ResourcePoolManager(resource_pool_spec=pools, mapping={})
    try:
        manager.create_resource_pool()
    except ValueError as exc:  # verl's own count: "Total available GPUs N is less than total desired GPUs M"
        _say(placed=False, why=f"verl: {exc}")
        return
    found: dict = {}

    def place() -> None:
        groups = [pg for pool in manager.resource_pool_dict.values()
                  for pg in pool.get_placement_groups(device_name=device)]
        table = ray.util.placement_group_table()
        found["bundle"] = groups[0].bundle_specs[0]
        found["groups"] = len(groups)
        found["nodes"] = len({n for pg in groups for n in table[pg.id.hex()]["bundles_to_node_id"].values()})

    worker = threading.Thread(target=place, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():  # verl waits for ray.get(pg.ready()) with no time limit
        _say(placed=False, why=f"verl's STRICT_PACK placement groups did not form within {timeout:g} s")
        os._exit(0)
    _say(placed=True, why="", **found)


if __name__ == "__main__":
    main()

"""The `cluster-smoke` job: from inside a Ray job, reach every alive node with one pinned task.

It proves the path every real job takes: the job driver starts, connects to its cluster, schedules work on
each node and gets results back; and that each node's Python imports the reward module a verl job names
(`pkg://gspo_cli.rewards.verl_entry`), which verl's reward workers load on every node.
"""

from __future__ import annotations

import os
import socket


def main(argv: list[str]) -> int:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from gspo_cli.errors import ClusterError
    from gspo_cli.jobs import events

    # Inside a Ray job RAY_ADDRESS names the job's own cluster; `gspo cluster smoke --local` sets it from the
    # resolved target. Never "auto": that attaches to whatever cluster this host ran last, a stale one included.
    address = os.environ.get("RAY_ADDRESS")
    if not address:
        raise ClusterError("the smoke job has no cluster to reach: RAY_ADDRESS is not set",
                           "run `gspo cluster smoke` (a Ray job), or `--local --address HEAD:6379`")
    ray.init(address=address, logging_level="ERROR",  # type: ignore[arg-type]  # ray takes a level name too (logging.setLevel)
             log_to_driver=False)
    try:
        nodes = [n for n in ray.nodes() if n.get("Alive")]

        @ray.remote(num_cpus=0)
        def where() -> dict:
            from gspo_cli.rewards.choice import resolves_here

            return {"hostname": socket.gethostname(), "pid": os.getpid(), "reward": resolves_here() or "ok"}

        results = []
        for i, node in enumerate(nodes, 1):
            strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
            answer = ray.get(where.options(scheduling_strategy=strategy).remote(), timeout=120)
            name = (node.get("Labels") or {}).get("gspo-node")  # set by `gspo cluster up/join`
            results.append({"node_id": node["NodeID"], "ip": node["NodeManagerAddress"], "name": name, **answer})
            events.progress(i, len(nodes), task="nodes", metrics={"reached": i})
        events.message(f"reached {len(results)} of {len(nodes)} alive node(s)")
        events.result({"nodes": results, "resources": ray.cluster_resources()})
        broken = [r for r in results if r["reward"] != "ok"]
        for r in broken:
            events.message(f"node {r['ip']}: cannot import gspo's reward module ({r['reward']}); install gspo in "
                           "the Python that runs Ray there (the one `gspo cluster join` starts it with)")
        return 1 if broken else 0
    finally:
        ray.shutdown()

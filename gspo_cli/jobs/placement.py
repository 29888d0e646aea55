"""Which Ray actor runs on which node: the placement of a job's workers, read from the head's state API.

`gspo cluster status --actors` shows it. Node names are the `gspo-node` labels (jobs/nodestate.py); verl's actors
are named by role: its trainer ranks are `<prefix>WorkerDict_<placement group>:<local rank>` (verl
single_controller/ray/base.py `_create_worker`; rank = group x ranks per group + local rank, the order verl
creates them in), its vLLM servers `vllm_server_<replica>_<node>` (verl workers/rollout/replica.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gspo_cli.jobs.target import ClusterTarget

from gspo_cli.errors import ClusterError

# class-name fragment -> what it is, for the table (verl 0.9.1, TransferQueue, Ray's job layer)
ROLES = (
    ("WorkerDict", "verl trainer rank"),  # FSDP actor + the rollout worker that syncs weights into vLLM
    ("vLLMHttpServer", "vLLM server"),
    ("TaskRunner", "verl TaskRunner"),  # the training loop (verl's driver)
    ("AgentLoopWorker", "verl agent loop"),
    ("RewardLoopWorker", "verl reward loop"),
    ("TransferQueueController", "TransferQueue"),
    ("SimpleStorageUnit", "TransferQueue storage"),
    ("JobSupervisor", "Ray job supervisor"),  # runs the job's entrypoint: gspo's job wrapper
)
_WORKER = re.compile(r"WorkerDict_(\d+):(\d+)$")


def role(class_name: str) -> str:
    return next((what for key, what in ROLES if key in class_name), class_name)


def trainer_ranks(names: list[str]) -> dict[str, int]:
    """verl's rank of each WorkerDict actor name: placement group x ranks per group + local rank."""
    groups = [(name, int(m.group(1)), int(m.group(2))) for name in names if (m := _WORKER.search(name))]
    per_group = max((local for _, _, local in groups), default=-1) + 1
    return {name: pg * per_group + local for name, pg, local in groups}


def actors(target: ClusterTarget, node_names: dict[str, str]) -> list[dict[str, Any]]:
    """The alive actors of the cluster, one row each (node, role, class, name, pid, rank), sorted by node."""
    target.use_auth()
    from ray.util.state import list_actors

    try:
        found = list_actors(address=target.dashboard_url, filters=[("state", "=", "ALIVE")], limit=10000,
                            detail=True, raise_on_missing_output=False)
    except Exception as exc:
        from gspo_cli.jobs.target import raise_for

        raise_for(exc, target, "cannot list the actors of")
        raise ClusterError("unreachable") from None  # raise_for always raises
    ranks = trainer_ranks([a.name or "" for a in found])
    rows = []
    for a in found:
        cls = (a.class_name or "").rsplit(".", 1)[-1]
        rows.append({"node": node_names.get(a.node_id or "", (a.node_id or "?")[:8]), "node_id": a.node_id,
                     "role": role(cls), "class": cls, "name": a.name or "", "pid": a.pid,
                     "job_id": a.job_id, "rank": ranks.get(a.name or "")})
    return sorted(rows, key=lambda r: (r["node"], r["rank"] if r["rank"] is not None else -1, r["class"]))

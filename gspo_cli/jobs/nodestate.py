"""Ray's view of the cluster's nodes (alive and dead), read through the dashboard's state API with the token.

A node's name is its `gspo-node` label (set by `gspo cluster up/join`: the hostname or GSPO_NODE_NAME), else
Ray's node name (its IP). Used by `gspo cluster status` and by the job follower to say which node was lost.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from gspo_cli.errors import ClusterError

if TYPE_CHECKING:
    from ray.util.state.common import NodeState

    from gspo_cli.jobs.target import ClusterTarget

NODE_LABEL = "gspo-node"


def row(node: NodeState) -> dict[str, Any]:
    labels = dict(getattr(node, "labels", None) or {})
    end_ms = getattr(node, "end_time_ms", None)
    return {
        "node_id": node.node_id,
        "name": labels.get(NODE_LABEL) or getattr(node, "node_name", None) or node.node_ip,
        "node_ip": node.node_ip,
        "is_head": bool(node.is_head_node),
        "state": str(node.state),
        "resources": dict(node.resources_total or {}),
        "death": (getattr(node, "state_message", None) or "").strip() or None,
        "ended_at": end_ms / 1000 if end_ms else None,
    }


def list_all(target: ClusterTarget) -> list[dict[str, Any]]:
    """Every node the head knows, alive or dead (Ray keeps dead nodes' records)."""
    target.use_auth()
    from ray.util.state import list_nodes

    try:
        nodes = list_nodes(address=target.dashboard_url, detail=True, raise_on_missing_output=False, limit=1000)
    except Exception as exc:
        from gspo_cli.jobs.target import raise_for

        raise_for(exc, target, "cannot list the nodes of")
        raise ClusterError("unreachable") from None  # raise_for always raises
    return [row(n) for n in nodes]


def split(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    alive = [r for r in rows if r["state"] == "ALIVE"]
    dead = sorted((r for r in rows if r["state"] != "ALIVE"), key=lambda r: r["ended_at"] or 0)
    return alive, dead


def describe(node: dict[str, Any]) -> str:
    when = time.strftime("%H:%M:%S", time.localtime(node["ended_at"])) if node.get("ended_at") else "?"
    why = (node.get("death") or "no reason recorded").splitlines()[0][:200]
    return f"node {node['name']} ({node['node_ip']}, id {node['node_id'][:8]}) at {when}: {why}"


class LossWatch:
    """Notices nodes that die after it starts (a node alive at the first look, dead at a later one)."""

    def __init__(self, target: ClusterTarget, *, every_s: float = 2.0) -> None:
        self.target = target
        self.every_s = every_s
        self.known_alive: set[str] = set()
        self.lost: list[dict[str, Any]] = []
        self._next = 0.0
        self._ok = True

    def poll(self, *, force: bool = False) -> list[dict[str, Any]]:
        """Newly lost nodes since the last poll (at most every `every_s`, unless forced)."""
        now = time.monotonic()
        if not self._ok or (not force and now < self._next):
            return []
        self._next = now + self.every_s
        try:
            rows = list_all(self.target)
        except ClusterError:
            return []  # the head itself may be going away; the job status says the rest
        new = [r for r in rows if r["state"] != "ALIVE" and r["node_id"] in self.known_alive]
        self.known_alive = {r["node_id"] for r in rows if r["state"] == "ALIVE"}
        self.lost.extend(new)
        return new

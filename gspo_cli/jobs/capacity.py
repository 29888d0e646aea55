"""Does the cluster still have the device slots a verl job needs? Said in one line when it does not.

verl places its trainer ranks in one placement group per node (`{device: 1, CPU: ...}` bundles, verl
single_controller/ray/base.py `get_placement_groups`) and waits for them with `ray.get(pg.ready())`, with no
timeout: after a node loss a restarted verl either fails verl's own count (`_check_resource_available`: "Total
available GPUs 2 is less than total desired GPUs 3") or, while the head has not yet declared the node dead, waits
forever. The job wrapper (jobs/supervise.py) asks here before each attempt and while one runs, and ends the job
with the message below instead.

What a job needs is not decided here: the engine answers it when the job is compiled (`cluster.nnodes` nodes with
`cluster.devices_per_node` slots each of the Ray resource it places on, the device resolved once; the verl engine's
spec, engines/verl/spec.py) and records it in the job file; the wrapper reads it back (`Need.from_json`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from gspo_cli.errors import first_line
from gspo_cli.jobs import events
from gspo_cli.shell import quote


@dataclass(frozen=True)
class Need:
    resource: str  # the Ray resource the job's placement-group bundles ask for
    nnodes: int
    per_node: int

    @property
    def total(self) -> int:
        return self.nnodes * self.per_node

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Need | None:
        """The need a job file records (None: the job recorded none, so there is nothing to count)."""
        if not data:
            return None
        return cls(str(data["resource"]), int(data["nnodes"]), int(data["per_node"]))

    def describe(self) -> str:
        return f"{self.nnodes} node(s) x {self.per_node} {self.resource}"


def shortfall(need: Need, rows: list[dict[str, Any]], *, since: float = 0.0) -> str | None:
    """None when `need` fits the alive nodes in `rows` (jobs/nodestate.py rows), else the one-line reason: which
    nodes were lost (after `since`, a Unix time), how many slots are left, what the job needs."""
    alive = [r for r in rows if r["state"] == "ALIVE"]
    fit = [r for r in alive if float(r["resources"].get(need.resource, 0)) >= need.per_node]
    if len(fit) >= need.nnodes:
        return None
    lost = lost_nodes(rows, since=since)
    per_node = [float(r["resources"].get(need.resource, 0)) for r in alive]
    left = sum(per_node)
    said = f"node {', '.join(lost)} lost; " if lost else ""
    wants = f"the job needs {need.total} ({need.nnodes} node(s) x {need.per_node}) [run-cluster-short]"
    if left >= need.total:  # enough in total, too few on each node: verl's per-node groups cannot form either
        return (f"{said}{len(fit)} of {len(alive)} alive node(s) hold {need.per_node} device slots ({need.resource}) "
                f"(the most on one node: {max(per_node, default=0):g}); {wants}")
    return (f"{said}{left:g} of {need.total} device slots ({need.resource}) {'left ' if lost else ''}on "
            f"{len(alive)} alive node(s); {wants}")


def lost_nodes(rows: list[dict[str, Any]], *, since: float = 0.0) -> list[str]:
    """Names of the nodes in `rows` that ended after `since` (a Unix time)."""
    return [r["name"] for r in rows if r["state"] != "ALIVE" and (r.get("ended_at") or 0) >= since]


def advice(run_name: str, *, lost: bool = True) -> str:
    """How to get going: after a node loss, rejoin and resume; on a cluster that never had the slots, start its
    nodes with their devices (or ask for fewer) and train again."""
    if lost:
        return (f"rejoin the node (`gspo cluster join HEAD --preset ...` on it) or lower cluster.nnodes, then "
                f"`gspo train --resume {quote(run_name)}` continues from the last complete checkpoint")
    return ("start every node with its devices (`gspo cluster up` / `gspo cluster join HEAD --preset ...`; "
            "`gspo cluster status` shows what Ray sees) or lower cluster.nnodes / cluster.devices_per_node; "
            "trainer.restart.capacity_check: false leaves the count to verl")


def cluster_rows() -> list[dict[str, Any]]:
    """The head's node table as seen from inside a Ray job (RAY_ADDRESS and the token are in its environment);
    raises what Ray's state API raises when it cannot be read (the checker says so and counts nothing)."""
    from ray.util.state import list_nodes

    from gspo_cli.jobs.nodestate import row

    return [row(n) for n in list_nodes(detail=True, limit=1000, raise_on_missing_output=False, timeout=30)]


def checker(need: Need, *, since: float, run_name: str,
            rows: Callable[[], list[dict[str, Any]]] = cluster_rows) -> Callable[[], str | None]:
    """A no-argument check for the job wrapper: the shortfall message with what to do (advice), or None (enough
    slots, or unknown: a node table that cannot be read is said in the job's log, once per cause)."""
    said: list[str] = []  # the last unreadable cause said: a head that stays busy is said once, not every poll

    def check() -> str | None:
        try:
            found = rows()
        except Exception as exc:  # noqa: BLE001 - the head may be busy or going away: never a reason to stop a job
            cause = f"{type(exc).__name__}: {first_line(exc)}"
            if cause not in said:
                said[:] = [cause]
                events.message(f"capacity check skipped: cannot read the cluster's node table ({cause}); "
                               "asked again at the next poll")
            return None
        said.clear()
        short = shortfall(need, found, since=since)
        if short is None:
            return None
        return f"{short}: {advice(run_name, lost=bool(lost_nodes(found, since=since)))}"

    return check

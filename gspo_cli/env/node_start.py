"""What `gspo cluster up` (the head) and `gspo cluster join HEAD` (a worker) do on this node, as a service:
which token the node starts with (the token policy), its `ray start` plan (env/raystart.py), the start, and the
wait for the preset's NPUs. cli/cluster_up.py parses the flags; env/node_up.py runs these in order and prints what
they return.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gspo_cli.env import raystart
from gspo_cli.errors import ClusterError
from gspo_cli.jobs import auth, nodes
from gspo_cli.jobs.nodes import NodeRecord
from gspo_cli.jobs.resources import NodeResources


@dataclass
class NodeArgs:
    """The flags of `cluster up` (role "head") and `cluster join` (role "worker")."""

    role: str
    preset: str
    head: str | None
    port: int
    dashboard_port: int
    node_ip: str | None
    npus: int | None
    stack: str | None
    temp_dir: str | None
    wait: float
    sets: list[str] | None
    num_cpus: int | None = None
    dashboard_host: str | None = None
    auth: bool = True
    rotate_token: bool = False
    token_file: str | None = None
    ray_args: list[str] | None = None
    metrics: bool = False


@dataclass(frozen=True)
class NodeToken:
    """The token file this node starts with (None: no auth); `made`: `up` wrote a new one rather than reuse it."""

    path: Path | None
    made: bool = False


def node_token(a: NodeArgs) -> NodeToken:
    """The token policy: `up` makes (or reuses) this home's token; `join` needs the token of the head it joins,
    and this home's token is never handed to a head other than the one `cluster up` recorded here."""
    if a.role == "head":
        if not a.auth:
            return NodeToken(None)
        path, new = auth.ensure_cluster_token(rotate=a.rotate_token)
        return NodeToken(path, made=new)
    known = nodes.matching_cluster(a.head or "")
    if known is not None and known.auth == auth.DISABLED and not a.token_file:
        return NodeToken(None)
    if a.token_file:
        return NodeToken(auth.require_token(Path(a.token_file).expanduser(), a.head or "?"))
    if known is not None:  # the cluster `cluster up` recorded in this (shared) home: its own token
        return NodeToken(auth.require_token(Path(known.token_file or auth.cluster_token_file()), a.head or "?"))
    # Another head: this home's token belongs to another cluster and is never handed to it.
    named = auth.user_named_token()
    if named and named != "RAY_AUTH_TOKEN":
        return NodeToken(auth.require_token(Path(named).expanduser(), a.head or "?"))
    recorded = nodes.read_cluster()
    raise ClusterError(
        f"{a.head} is not the cluster recorded in this $GSPO_HOME"
        + (f" (that one is {recorded.address})" if recorded else " (no `gspo cluster up` recorded here)")
        + ", so gspo does not hand it this home's token",
        "pass that cluster's token with --token-file FILE (or RAY_AUTH_TOKEN_PATH), or join with the address "
        "`gspo cluster up` printed")


def dashboard_url(a: NodeArgs) -> str | None:
    """For a worker: the head's dashboard as `cluster up` recorded it (shared home), else HEAD_IP:--dashboard-port."""
    if a.role == "head":
        return None
    known = nodes.matching_cluster(a.head or "")
    return known.dashboard_url if known else f"http://{(a.head or '').rsplit(':', 1)[0]}:{a.dashboard_port}"


def plan(a: NodeArgs, loaded: Any, token: NodeToken, node: NodeResources | None = None) -> dict[str, Any]:
    """This node's `ray start` plan (raystart.plan_here) for the flags, the loaded preset and the token; `node`:
    what the preset's engine asks a node to offer (engines.node_resources)."""
    if a.role == "worker" and a.token_file and token.path:
        # the token the user named for this head also serves the NPU wait after the start (jobs/target.py)
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(token.path)
    temp_dir = str(raystart.private_temp_dir(a.temp_dir))
    return raystart.plan_here(loaded, role=a.role, stack=a.stack, head_address=a.head, port=a.port,
                              dashboard_port=a.dashboard_port, node_ip=a.node_ip, npus=a.npus, temp_dir=temp_dir,
                              num_cpus=a.num_cpus, token_file=token.path, dashboard_host=a.dashboard_host,
                              dashboard_url=dashboard_url(a), extra_args=a.ray_args, metrics=a.metrics, node=node)


def start(p: dict[str, Any]) -> NodeRecord:
    return raystart.start(p)


def npu_wait_target(a: NodeArgs, loaded: Any, record: NodeRecord) -> tuple[str, int] | None:
    """(dashboard URL, NPUs to wait for) when `--wait` applies to this node, else None."""
    if a.wait <= 0:
        return None
    return raystart.npu_wait_target(loaded, record, role=a.role, head=a.head, dashboard_port=a.dashboard_port)


def wait_for_npus(url: str, want: int, wait: float, on_change: Callable[[float], None]) -> float:
    """Poll the cluster's NPU total until `want` or `wait` seconds; `on_change(n)` on each new total; the last seen."""
    last: list[float] = []

    def progress(n: float) -> None:  # polled every 2 s: report only changes
        if not last or n != last[-1]:
            on_change(n)
        last[:] = [n]

    return raystart.wait_for_npus(url, want, timeout=wait, on_progress=progress)

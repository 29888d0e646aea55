"""The records gspo keeps of the Ray nodes it started with `gspo cluster up` / `gspo cluster join`.

- `$GSPO_HOME/ray/nodes/<node name>.json`: one per host (the node name is the hostname, or `GSPO_NODE_NAME` when
  several gspo nodes share one machine, as in the multi-node tests). `gspo cluster down` stops only this one.
- `$GSPO_HOME/ray/cluster.json`: written by `cluster up`: the head's addresses and whether it wants a token.
  `join` reads it (the home is shared) to learn the dashboard URL and auth of the head it joins.

Every gspo command on a host whose record names a live node uses that cluster when no address is named.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from gspo_cli import layout
from gspo_cli.fsutil import atomic_write_json
from gspo_cli.jobs.procs import same_process


@dataclass
class NodeRecord:
    role: str  # head | worker
    hostname: str  # the node name (hostname or GSPO_NODE_NAME)
    pid: int  # leader of the process group gspo created
    address: str  # GCS address of the cluster
    node_ip: str | None
    npus: int
    argv: list[str]
    log_file: str
    started_at: float
    dashboard_url: str | None = None
    auth: str = "disabled"  # token | disabled
    token_file: str | None = None
    temp_dir: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # the started process's identity (jobs/procs.identity): with `argv`, what `cluster down` checks before it
    # signals the pid (a pid reused after a reboot is not gspo's node)
    identity: dict[str, Any] | None = None

    def is_ours(self) -> bool:
        """Whether `pid` is still the `ray start` gspo ran for this record."""
        return same_process(self.pid, self.identity, argv=self.argv)


def node_name() -> str:
    return os.environ.get("GSPO_NODE_NAME") or socket.gethostname()


def nodes_dir() -> Path:
    return layout.ray_dir() / "nodes"


def record_file(name: str | None = None) -> Path:
    return nodes_dir() / f"{name or node_name()}.json"


def cluster_file() -> Path:
    return layout.ray_dir() / "cluster.json"


def _load(cls, path: Path):
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    known = {f.name for f in fields(cls)}
    try:
        return cls(**{k: v for k, v in data.items() if k in known})
    except TypeError:
        return None


def read_record(name: str | None = None) -> NodeRecord | None:
    return _load(NodeRecord, record_file(name))


def _private() -> None:
    from gspo_cli.private import ensure_private_dir

    ensure_private_dir(layout.ray_dir(), "Ray folder")
    ensure_private_dir(nodes_dir(), "Ray node folder")


def write_record(record: NodeRecord) -> None:
    _private()
    atomic_write_json(record_file(record.hostname), asdict(record))


def live_record() -> NodeRecord | None:
    """This host's node record if the `ray start` gspo ran for it is still alive (and is still that process)."""
    record = read_record()
    return record if record is not None and record.is_ours() else None


@dataclass
class ClusterRecord:
    address: str
    dashboard_url: str
    auth: str
    token_file: str | None
    head: str  # node name of the head
    started_at: float


def read_cluster() -> ClusterRecord | None:
    return _load(ClusterRecord, cluster_file())


def write_cluster(record: ClusterRecord) -> None:
    _private()
    atomic_write_json(cluster_file(), asdict(record))


def matching_cluster(address: str) -> ClusterRecord | None:
    """gspo's record of the cluster at `address` (GCS address or dashboard URL), if this home holds one."""
    record = read_cluster()
    if record is None:
        return None
    wanted = address.rstrip("/")
    return record if wanted in (record.address, record.dashboard_url.rstrip("/")) else None

"""Which Ray cluster a gspo command uses, with which token, and a jobs client for it.

Order: `--address` > preset `cluster.address` > `RAY_ADDRESS` > the node gspo started on this host (`gspo cluster
up/join`, see `nodes.py`) > the embedded loopback head (`local_head.py`, started on first use). An address is a
dashboard URL (`http://host:8265`) or a GCS address (`host:6379`, whose dashboard is assumed at port 8265 unless
gspo's cluster record knows better).

Auth (see `auth.py`): a token belongs to one cluster. gspo's own clusters (the embedded head, the node this host
runs, the cluster `gspo cluster up` recorded in this home, named by one of its recorded addresses) get the token
file gspo recorded for them. Any other address gets no token unless the user names one for it explicitly
(RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN in the environment); a preset can never supply one. gspo says so once, and
warns once when a token would travel over plain HTTP to a non-loopback host.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn

from gspo_cli.errors import ClusterError
from gspo_cli.jobs import auth, local_head, loopback, nodes

if TYPE_CHECKING:
    from ray.job_submission import JobSubmissionClient

    from gspo_cli.config.schema import Preset
    from gspo_cli.jobs.resources import NodeResources

DEFAULT_DASHBOARD_PORT = 8265


class NoClusterError(ClusterError):
    """Nothing names a cluster and no embedded head runs (and this command does not start one)."""


@dataclass
class ClusterTarget:
    dashboard_url: str
    address: str | None  # GCS address when known
    embedded: bool
    source: str  # where the address came from: --address, preset, RAY_ADDRESS, node record, embedded
    auth: str | None = None  # token | disabled | None: leave the user's RAY_AUTH_* as they are
    token_file: str | None = None
    local_only: bool = False  # a head in Ray's local-only mode (the embedded head): drivers here must be too

    def use_auth(self) -> None:
        """Make this process's Ray clients talk to this cluster with its token (or none), in its mode."""
        auth.use_in_process(self.auth, self.token_file)
        loopback.use_in_process(self.local_only)
        if self.auth != auth.DISABLED:
            auth.warn_plain_http(self.dashboard_url)


def dashboard_url(address: str) -> str:
    if address.startswith(("http://", "https://")):
        return address.rstrip("/")
    if address.startswith("ray://"):
        raise ClusterError(
            f"address {address!r} is a Ray Client address; gspo submits jobs through the dashboard",
            "pass the dashboard URL (http://HEAD:8265) or the GCS address (HEAD:6379)",
            exit_code=2,
        )
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return f"http://{host}:{DEFAULT_DASHBOARD_PORT}"


def _named(value: str, source: str) -> ClusterTarget:
    known = nodes.matching_cluster(value)
    if known is not None:  # gspo's own cluster, named explicitly: its recorded dashboard and token
        return ClusterTarget(known.dashboard_url, known.address, embedded=False, source=source, auth=known.auth,
                             token_file=known.token_file)
    gcs = None if value.startswith(("http://", "https://")) else value
    target = ClusterTarget(dashboard_url(value), gcs, embedded=False, source=source, local_only=_embedded(value))
    named = auth.user_named_token()
    if named is not None:  # the user named a token for this cluster: use it as they set it
        target.auth = auth.TOKEN if os.environ.get("RAY_AUTH_MODE", auth.TOKEN) != auth.DISABLED else None
        target.token_file = None if named == "RAY_AUTH_TOKEN" else named
        return target
    # Not a cluster gspo recorded: gspo's tokens stay home, whatever this home holds.
    target.auth = auth.DISABLED
    _say_no_token(target)
    return target


def _embedded(value: str) -> bool:
    """Whether `value` names this home's embedded head, recorded as local-only (jobs/loopback.py)."""
    record = local_head.read_record()
    return bool(record and record.local_only and value.rstrip("/") in (record.address, record.dashboard_url))


def _say_no_token(target: ClusterTarget) -> None:
    from gspo_cli.console import err

    recorded = nodes.read_cluster()
    mine = f"; the cluster gspo started from this home is {recorded.dashboard_url}" if recorded else ""
    err.print(f"[dim]Using the Ray cluster at {target.dashboard_url} (from {target.source}): not a cluster gspo "
              f"recorded{mine}, so no token is sent (if it needs one: RAY_AUTH_TOKEN_PATH=<its token file>).[/]",
              highlight=False)


def _from_record(record: nodes.NodeRecord) -> ClusterTarget:
    url = record.dashboard_url or dashboard_url(record.address)
    return ClusterTarget(url, record.address, embedded=False,
                         source=f"the Ray {record.role} gspo started on this host (pid {record.pid})",
                         auth=record.auth, token_file=record.token_file)


def resolve_target(address: str | None = None, preset: Preset | None = None, *, start_local: bool = True,
                   node: NodeResources | None = None) -> ClusterTarget:
    """Which Ray cluster to use; starts the embedded head only when nothing is named and start_local is set.
    `node`: what the embedded head must offer the job (its engine's answer, engines/spec.py `node_resources`);
    a running head that lacks it is restarted with it when idle, else refused (local_head.start)."""
    named = [
        (address, "--address"),
        (getattr(getattr(preset, "cluster", None), "address", None), "preset cluster.address"),
        (os.environ.get("RAY_ADDRESS"), "RAY_ADDRESS"),
    ]
    for value, source in named:
        if value and value != "local":
            return _named(value, source)
    record = nodes.live_record()
    if record is not None:
        return _from_record(record)
    head = local_head.running()
    if head is not None and node:
        head = local_head.start(node=node)  # the running head when it offers what `node` asks (or, idle, restarted)
    if head is None:
        if not start_local:
            raise NoClusterError(
                "no Ray cluster: no --address, no RAY_ADDRESS, no node started by `gspo cluster up/join` on this "
                "host and no embedded head running",
                "run a command that starts one (gspo train --preset tiny), `gspo cluster up`, or pass --address",
            )
        from gspo_cli.console import err

        err.print("[dim]Starting the embedded local Ray head on 127.0.0.1 (once; reused by later commands)...[/]")
        head = local_head.start(node=node)
    return ClusterTarget(head.dashboard_url, head.address, embedded=True, source="embedded",
                         auth=auth.TOKEN, token_file=head.token_file, local_only=head.local_only)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def raise_for(exc: BaseException, target: ClusterTarget, doing: str) -> NoReturn:
    """Turn a Ray client error into one clear ClusterError (a token problem says so: jobs/ray_errors.py)."""
    from gspo_cli.jobs import ray_errors

    text = str(exc)
    if ray_errors.classify(exc).kind == ray_errors.AUTH:
        detail = next((ln.strip() for ln in text.splitlines() if ln.strip().startswith(("Authentication",
                                                                                          "Unauthorized",
                                                                                          "Forbidden"))),
                      first_line(exc))
        raise auth.auth_error(target.dashboard_url, target.source, target.token_file, detail) from None
    raise ClusterError(f"{doing} {target.dashboard_url} (from {target.source}): {first_line(exc)}",
                       "start a cluster (`gspo cluster up` on the head), fix the address, or drop "
                       "--address/RAY_ADDRESS to use the cluster gspo started here or the embedded local head"
                       ) from None


def client(target: ClusterTarget) -> JobSubmissionClient:
    """A JobSubmissionClient for the target, with a clean error when it cannot be reached or refuses us."""
    import logging

    target.use_auth()
    from ray.job_submission import JobSubmissionClient

    # The SDK logs every websocket close at INFO; that is noise between our own progress lines.
    logging.getLogger("ray.dashboard.modules.job.sdk").setLevel(logging.WARNING)
    try:
        return JobSubmissionClient(target.dashboard_url)  # its version check is token-checked
    except Exception as exc:  # ConnectionError, RuntimeError: Ray raises several kinds here
        raise_for(exc, target, "cannot reach Ray at")

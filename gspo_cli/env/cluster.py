"""`gspo env doctor --cluster`: the same probes on every alive Ray node (one task pinned per node), then
cross-node checks: identical CANN / driver / torch_npu / vllm-ascend, NPU count per node, the Ray NPU total,
and `$GSPO_HOME` shared (a marker written here must be readable on every node).
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from typing import Any

from gspo_cli.checks import ERROR, OK, SKIP, Check
from gspo_cli.config import devices
from gspo_cli.env.checks import local_checks
from gspo_cli.env.facts import stack_versions
from gspo_cli.errors import ClusterError


def _node_probe(marker_name: str, extra_env: tuple[str, ...], secret_env: tuple[str, ...] = ()) -> dict[str, Any]:
    """Runs inside a Ray task on one node: every probe, plus the shared-storage marker."""
    from gspo_cli.env.host import Host
    from gspo_cli.env.probes import collect_facts, read_marker

    host = Host()
    facts = collect_facts(host, python=sys.executable, extra_env=extra_env, secret_env=secret_env)
    facts["marker"] = read_marker(host, marker_name)
    facts["node_ip"] = _node_ip()
    return facts


def _node_ip() -> str | None:
    """This node's IP as Ray sees it; None when the socket Ray asks cannot say (the node table's address is used)."""
    import ray

    try:
        return ray.util.get_node_ip_address()
    except OSError:
        return None


def _name(facts: dict[str, Any]) -> str:
    return facts.get("node") or facts.get("node_ip") or "?"


def cross_node_checks(nodes: list[dict[str, Any]], preset: Any, resources: dict[str, float],
                      token: str | None) -> list[Check]:
    """Pure: judge the per-node facts of all nodes together."""
    out: list[Check] = []
    device = devices.of(preset) if preset is not None else None
    npu = device is not None and device.ascend
    want_nodes = preset.cluster.nnodes if preset is not None else None
    if want_nodes is not None:
        out.append(Check("ray.nodes", OK if len(nodes) == want_nodes else ERROR,
                         f"{len(nodes)} alive node(s), preset expects {want_nodes}",
                         fix="" if len(nodes) == want_nodes else "start the missing workers: `gspo cluster join HEAD`"))
    if npu and device is not None:
        name = str(device.ray_resource)
        total, want = resources.get(name, 0), preset.cluster.world_size
        out.append(Check("ray.npu_total", OK if total == want else ERROR,
                         f"Ray registers {name}={total:g}, preset needs {want}",
                         fix="" if total == want else "on each node: `gspo cluster join` (passes --resources NPU=N "
                         "from npu-smi), or fix `import acl` (see ray.npu_detect)"))
        # another accelerator's resource (GPU) on an Ascend cluster: someone started Ray with --num-gpus
        foreign = [str(d.ray_resource) for d in devices.accelerators() if d is not device]
        others = [r for r in foreign if r in resources]
        if others:
            out.append(Check("ray.gpu_key", ERROR, f"Ray registers {others[0]}={resources[others[0]]:g} on an Ascend "
                             "cluster", fix=f"restart Ray without --num-gpus; verl places NPU workers by the {name} "
                             "resource"))
        else:
            out.append(Check("ray.gpu_key", OK, f"no {', '.join(foreign)} resource registered"))
        bad = [f"{_name(n)}={len(n['npu'].get('devices', []))}" for n in nodes
               if len(n["npu"].get("devices", [])) != preset.cluster.devices_per_node]
        out.append(Check("cluster.npu_count", ERROR if bad else OK,
                         f"nodes with the wrong NPU count: {', '.join(bad)}" if bad
                         else f"{preset.cluster.devices_per_node} NPUs on every node",
                         fix="npu-smi info on those nodes; drain or repair them" if bad else ""))
        for key, label in (("cann", "CANN"), ("driver", "driver"), ("torch_npu", "torch_npu"),
                           ("vllm_ascend", "vllm-ascend")):
            values = {_name(n): stack_versions(n)[key] for n in nodes}
            distinct = sorted({str(v) for v in values.values()})
            if len(distinct) > 1:
                out.append(Check(f"cluster.same.{key}", ERROR,
                                 f"{label} differs: " + ", ".join(f"{ip}={v}" for ip, v in values.items()),
                                 fix=f"install one {label} version on every node"))
            else:
                out.append(Check(f"cluster.same.{key}", OK, f"{label} {distinct[0] if distinct else '?'} everywhere"))
    if token is None:
        out.append(Check("cluster.gspo_home", SKIP, "could not write the marker here", fix="fix gspo.home first"))
    else:
        unseen = [_name(n) for n in nodes if n.get("marker") != token]
        out.append(Check("cluster.gspo_home", ERROR if unseen else OK,
                         f"$GSPO_HOME marker not readable on: {', '.join(unseen)}" if unseen
                         else f"$GSPO_HOME marker read on all {len(nodes)} node(s)",
                         fix="mount the same shared filesystem at the same $GSPO_HOME on every node" if unseen else ""))
    return out


def auth_check(dashboard_url: str) -> Check:
    """A head whose jobs API accepts callers without a token lets anyone on the network run code on every node."""
    from gspo_cli.jobs.auth import probe_unauthenticated

    status, text = probe_unauthenticated(dashboard_url)
    if status in (401, 403):
        return Check("ray.auth", OK, f"the jobs API at {dashboard_url} refuses callers without the token "
                                     f"(HTTP {status})")
    if status is None:
        return Check("ray.auth", SKIP, f"could not ask {dashboard_url} without a token: {text}")
    return Check("ray.auth", ERROR, f"the jobs API at {dashboard_url} answered a caller without a token (HTTP "
                                   f"{status}): anyone who reaches that port can run any command on every node",
                 fix="restart the cluster with `gspo cluster up` / `gspo cluster join` (token auth by default)")


def _probe_all(alive: list[dict], marker_name: str, extra: tuple[str, ...], timeout: float,
               marked: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], list[Check]]:
    """One probe task pinned to each alive node; (facts per node, a check per node whose probe failed).

    Nodes are keyed by node id and named by their `gspo-node` label (the hostname `cluster up/join` set), else
    their IP: several nodes may share one IP (containers, the multi-node tests on one machine).
    """
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0, max_retries=0)(_node_probe)
    refs = {
        n["NodeID"]: ((n.get("Labels") or {}).get("gspo-node") or n["NodeManagerAddress"], n["NodeManagerAddress"],
                      remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n["NodeID"],
                                                                                        soft=False)
                                     ).remote(marker_name, extra, marked))
        for n in alive
    }
    nodes: list[dict[str, Any]] = []
    failed: list[Check] = []
    for name, ip, ref in refs.values():
        try:
            facts = ray.get(ref, timeout=timeout)
            facts["node_ip"] = facts.get("node_ip") or ip
            facts["node"] = name
            nodes.append(facts)
        except Exception as exc:
            failed.append(Check("cluster.probe", ERROR, f"probe task failed on {name}: "
                                f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[-1][:200]}",
                                fix="is gspo installed in the same Python on that node?", node=name))
    return nodes, failed


def _check_reachable(address: str, source: str, timeout: float = 3.0) -> None:
    """Fail fast: `ray.init` retries an unreachable GCS for minutes."""
    import socket

    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or address, int(port or 6379)), timeout=timeout):
            return
    except (OSError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Ray GCS at {address} (from {source}): {exc}",
                           "start the cluster with `gspo cluster up`, or fix --address / RAY_ADDRESS") from None


@contextlib.contextmanager
def _quiet_stderr():
    """Send fd 2 to a temp file for the duration; yields a list that holds what was written there, after."""
    import tempfile

    sys.stderr.flush()
    saved, text = os.dup(2), []
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield text
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text.append(tmp.read().decode(errors="replace"))


def _check_token(target) -> None:
    """Ask the cluster's jobs API (token-checked like every Ray port) with the token Ray would send; a 401/403
    raises the token error at once. Unreachable or anything else: leave the verdict to ray.init."""
    import urllib.error
    import urllib.request

    from gspo_cli.jobs import auth

    token = None
    if os.environ.get("RAY_AUTH_MODE") == auth.TOKEN:
        token = os.environ.get("RAY_AUTH_TOKEN") or auth.read_token(os.environ.get("RAY_AUTH_TOKEN_PATH"))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        urllib.request.urlopen(urllib.request.Request(f"{target.dashboard_url}/api/version", headers=headers),
                               timeout=5).close()
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise auth.auth_error(target.dashboard_url, target.source, target.token_file,
                                  f"HTTP {exc.code} from the jobs API") from None
    except (urllib.error.URLError, OSError, ValueError):
        pass


GCS_PROBE_S = 5.0


def _check_gcs(target) -> None:
    """Ask the address one GCS question (`NodeInfoGcsService.GetClusterId`, the first call `ray.init` makes) with a
    deadline: `ray.init` itself retries for minutes against a port that is not a Ray GCS (a silent TCP port hangs
    it, another Ray gRPC port costs ~25 s). Not a GCS, silent, or refusing the token: one line now."""
    import grpc
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

    from gspo_cli.jobs import auth

    token = None
    if os.environ.get("RAY_AUTH_MODE") == auth.TOKEN:
        token = os.environ.get("RAY_AUTH_TOKEN") or auth.read_token(os.environ.get("RAY_AUTH_TOKEN_PATH"))
    metadata = [("authorization", f"Bearer {token}")] if token else []
    with grpc.insecure_channel(target.address) as channel:
        stub = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel)
        try:
            stub.GetClusterId(gcs_service_pb2.GetClusterIdRequest(), timeout=GCS_PROBE_S, metadata=metadata)
            return
        except grpc.RpcError as exc:
            code = exc.code()
            detail = " ".join((exc.details() or "").split())[:120]
    if code == grpc.StatusCode.UNAUTHENTICATED:
        raise auth.auth_error(target.address, target.source, target.token_file, "GCS refused the connection")
    why = {grpc.StatusCode.UNIMPLEMENTED: "a gRPC server that is not a Ray GCS (another Ray port?) answered",
           grpc.StatusCode.DEADLINE_EXCEEDED: f"nothing answered a GCS call within {GCS_PROBE_S:.0f} s",
           }.get(code, f"it does not speak Ray's gRPC ({code.name}: {detail})")
    raise ClusterError(f"{target.address} ({target.source}) is not a Ray GCS: {why}",
                       "pass the head's GCS address, HEAD:6379 (`gspo cluster status` shows it), or fix RAY_ADDRESS")


def run(preset: Any = None, address: str | None = None, *, timeout: float = 180.0) -> tuple[list[Check], list[dict]]:
    """Connect to the cluster, probe every alive node, return (checks, per-node facts)."""
    from gspo_cli import layout
    from gspo_cli.jobs import client as jobs

    target = jobs.resolve_target(address, preset, start_local=False)
    target.use_auth()
    if not target.address:
        raise ClusterError(f"--cluster needs the GCS address (HEAD:PORT), got only {target.dashboard_url}",
                           "pass --address HEAD:6379")
    _check_reachable(target.address, target.source)
    _check_gcs(target)  # not a Ray GCS, or a refused token: one line now, not after minutes of ray.init's retries
    _check_token(target)  # a refused token in one line now, not after ~20 s of Ray's own retries
    import ray

    checks: list[Check] = []
    with _quiet_stderr() as captured:  # Ray's C++ client logs every failed GCS call (~20 s of lines) to fd 2
        try:
            ray.init(address=target.address, logging_level="ERROR", log_to_driver=False, namespace="gspo-doctor",
                     configure_logging=False)
            exc = None
        except Exception as e:  # noqa: BLE001 - Ray raises several kinds here
            exc = e
    if exc is not None:
        from gspo_cli.jobs import auth, ray_errors

        # ray.init's errors carry no status; Ray's C++ client writes the refusal to stderr (jobs/ray_errors.py)
        if ray_errors.classify(exc).kind == ray_errors.AUTH or ray_errors.auth_refused("".join(captured)):
            raise auth.auth_error(target.address, target.source, target.token_file, "GCS refused the connection"
                                  ) from None
        raise ClusterError(f"cannot connect to Ray at {target.address} ({target.source}): "
                           f"{str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__}",
                           "start it with `gspo cluster up`, or fix --address / RAY_ADDRESS") from None
    marker = layout.gspo_home() / f".doctor-marker-{uuid.uuid4().hex[:12]}"
    token: str | None = uuid.uuid4().hex
    try:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(token)
        except OSError:
            token = None
        checks.append(Check("ray.reachable", OK, f"connected to {target.address} ({target.source})"))
        checks.append(auth_check(target.dashboard_url))
        alive = [n for n in ray.nodes() if n.get("Alive")]
        resources = {k: v for k, v in ray.cluster_resources().items() if not k.startswith("node:")}
        extra = tuple(preset.env.vars) if preset is not None else ()
        marked = tuple(preset.env.secrets) if preset is not None else ()
        nodes, failed = _probe_all(alive, marker.name, extra, timeout, marked)
        checks.extend(failed)
        for facts in nodes:
            for c in local_checks(facts, preset):
                c.node = facts["node"]
                checks.append(c)
        checks.extend(cross_node_checks(nodes, preset, resources, token))
        return checks, nodes
    finally:
        ray.shutdown()
        if token is not None:
            marker.unlink(missing_ok=True)


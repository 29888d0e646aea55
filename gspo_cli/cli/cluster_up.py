"""`gspo cluster up` (on the head) and `gspo cluster join HEAD` (on workers); registered on the cluster group."""

from __future__ import annotations

from dataclasses import dataclass

import typer

from gspo_cli.cli import options


@dataclass
class NodeArgs:
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


def _token(a: NodeArgs):
    """The token file this node starts with: made (or reused) by `up`, required by `join`."""
    from pathlib import Path

    from gspo_cli.console import err
    from gspo_cli.errors import ClusterError
    from gspo_cli.jobs import auth, nodes

    if a.role == "head":
        if not a.auth:
            err.print("[yellow]warning:[/] --no-auth: anyone who can reach this head's ports can run any command "
                      "on every node")
            return None
        path, new = auth.ensure_cluster_token(rotate=a.rotate_token)
        err.print(f"Token auth on; token {'written to' if new else 'reused from'} {path} (mode 0600)")
        return path
    known = nodes.matching_cluster(a.head or "")
    if known is not None and known.auth == auth.DISABLED and not a.token_file:
        return None
    if a.token_file:
        return auth.require_token(Path(a.token_file).expanduser(), a.head or "?")
    if known is not None:  # the cluster `cluster up` recorded in this (shared) home: its own token
        return auth.require_token(Path(known.token_file or auth.cluster_token_file()), a.head or "?")
    # Another head: this home's token belongs to another cluster and is never handed to it.
    named = auth.user_named_token()
    if named and named != "RAY_AUTH_TOKEN":
        return auth.require_token(Path(named).expanduser(), a.head or "?")
    recorded = nodes.read_cluster()
    raise ClusterError(
        f"{a.head} is not the cluster recorded in this $GSPO_HOME"
        + (f" (that one is {recorded.address})" if recorded else " (no `gspo cluster up` recorded here)")
        + ", so gspo does not hand it this home's token",
        "pass that cluster's token with --token-file FILE (or RAY_AUTH_TOKEN_PATH), or join with the address "
        "`gspo cluster up` printed")


def _dashboard_url(a: NodeArgs) -> str | None:
    """For a worker: the head's dashboard as `cluster up` recorded it (shared home), else HEAD_IP:--dashboard-port."""
    from gspo_cli.jobs import nodes

    if a.role == "head":
        return None
    known = nodes.matching_cluster(a.head or "")
    return known.dashboard_url if known else f"http://{(a.head or '').rsplit(':', 1)[0]}:{a.dashboard_port}"


def _start(a: NodeArgs) -> None:
    from gspo_cli.config.presets import load_preset
    from gspo_cli.console import err
    from gspo_cli.env import raystart

    loaded = load_preset(a.preset, a.sets or [])
    token_file = _token(a)
    if a.role == "worker" and a.token_file and token_file:
        import os  # the token the user named for this head also serves the NPU wait below (jobs/target.py)

        os.environ["RAY_AUTH_TOKEN_PATH"] = str(token_file)
    temp_dir = str(raystart.private_temp_dir(a.temp_dir))
    p = raystart.plan_here(loaded, role=a.role, stack=a.stack, head_address=a.head, port=a.port,
                           dashboard_port=a.dashboard_port, node_ip=a.node_ip, npus=a.npus, temp_dir=temp_dir,
                           num_cpus=a.num_cpus, token_file=token_file, dashboard_host=a.dashboard_host,
                           dashboard_url=_dashboard_url(a), extra_args=a.ray_args, metrics=a.metrics)
    if a.metrics:
        err.print("[yellow]warning:[/] --metrics: Ray's metrics exporter listens on every interface of this node "
                  "without auth (read-only metrics: node IPs, temp paths, resource use); firewall it")
    for name, _value, why in p["exports"].exports:
        err.print(f"[dim]export {name}[/]" + (f" [dim]({why})[/]" if why else ""))
    for d in p["exports"].dropped:
        err.print(f"[dim]dropped {d['name']} (ignored since vllm-ascend {d['since']})[/]")
    err.print("$ " + " ".join(p["argv"][1:]) + "  (ray)")
    record = raystart.start(p)
    err.print(f"[green]Ray {a.role} started[/] (node {record.hostname}, pid {record.pid}, NPU={record.npus}); "
              f"log: {record.log_file}")
    if a.role == "head":
        err.print(f"On each other node: gspo cluster join {record.address} --preset {loaded.name}")
        err.print(f"From elsewhere:     export RAY_ADDRESS={record.dashboard_url}"
                  + (f"  (and RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH={record.token_file})" if record.token_file
                     else ""))
    err.print(f"gspo commands on this host now use this cluster ({record.dashboard_url}); `gspo cluster down` "
              "stops this node.")
    target = raystart.npu_wait_target(loaded, record, role=a.role, head=a.head, dashboard_port=a.dashboard_port)
    if a.wait > 0 and target is not None:
        _wait_for_npus(*target, a.wait)


def _wait_for_npus(url: str, want: int, wait: float) -> None:
    from gspo_cli.console import err
    from gspo_cli.env import raystart

    last: list[float] = []

    def progress(n: float) -> None:  # polled every 2 s: print only changes
        if not last or n != last[-1]:
            err.print(f"[dim]NPU registered: {n:g}/{want}[/]")
        last[:] = [n]

    seen = raystart.wait_for_npus(url, want, timeout=wait, on_progress=progress)
    if seen < want:
        err.print(f"[yellow]Only {seen:g} of {want} NPUs registered after {wait:g} s[/]: "
                  "join the other nodes, then `gspo cluster status`.")
    else:
        err.print(f"[green]All {want} NPUs registered.[/]")


NODE_IP = typer.Option(None, "--node-ip", help="This node's IP (default: the one Ray picks).")
NPUS = typer.Option(None, "--npus", help="NPU count (default: from npu-smi).")
STACK = typer.Option(None, "--stack", help="vllm-ascend==X to judge the exports against.")
TEMP_DIR = typer.Option(None, "--temp-dir", help="Private folder (created 0700) for Ray's temp dir DIR/ray (default: "
                        "$GSPO_HOME/ray/tmp-NODE, or a new /tmp/gspo-ray-* where that is too long for Ray's sockets).")
NUM_CPUS = typer.Option(None, "--num-cpus", help="CPUs Ray may schedule on this node (default: all).")
METRICS = typer.Option(False, "--metrics/--no-metrics", help="Ray's per-node Prometheus exporter (default off: it "
                       "listens on every interface without auth; docs/ascend.md, Ports).")
RAY_ARGS = typer.Option(None, "--ray-arg", metavar="--FLAG=VALUE", help="Extra `ray start` flag, passed as given "
                        "(repeatable), e.g. --ray-arg=--dashboard-agent-listen-port=52366.")


def register(app: typer.Typer) -> None:
    """Add `up` and `join` to the `gspo cluster` group."""

    @app.command("up")
    def up_cmd(
        preset: str = options.preset(required=True, help="Preset (exports, cluster shape), e.g. qwen3-32b."),
        port: int = typer.Option(6379, "--port", help="GCS port of the head."),
        dashboard_port: int = typer.Option(8265, "--dashboard-port", help="Dashboard / Jobs API port."),
        dashboard_host: str | None = typer.Option(
            None, "--dashboard-host", help="Interface the dashboard / Jobs API listens on (default: the node IP; "
            "0.0.0.0 for every interface)."),
        node_ip: str | None = NODE_IP, npus: int | None = NPUS, stack: str | None = STACK,
        temp_dir: str | None = TEMP_DIR, num_cpus: int | None = NUM_CPUS,
        use_auth: bool = typer.Option(True, "--auth/--no-auth", help="Ray token auth (default on; --no-auth lets "
                                      "anyone who reaches the head's ports run code on every node)."),
        rotate_token: bool = typer.Option(False, "--rotate-token", help="Write a new token instead of reusing "
                                          "$GSPO_HOME/ray/auth_token (restart every node after)."),
        wait: float = typer.Option(600, "--wait", help="Seconds to wait for the preset's NPU total (0: no wait)."),
        sets: list[str] | None = options.sets("cluster.nnodes=2"), ray_args: list[str] | None = RAY_ARGS,
        metrics: bool = METRICS,
    ) -> None:
        """Start the Ray head here with token auth, the preset's exports and NPU count, then wait for the workers.

        The token goes to $GSPO_HOME/ray/auth_token (mode 0600; reused if present): with $GSPO_HOME shared by all \
nodes, `gspo cluster join` and every gspo command find it. gspo commands on this host use this cluster from now \
on (no --address needed); the line to run on the other nodes is printed.
        """
        _start(NodeArgs("head", preset, None, port, dashboard_port, node_ip, npus, stack, temp_dir, wait, sets,
                        num_cpus=num_cpus, dashboard_host=dashboard_host, auth=use_auth, rotate_token=rotate_token,
                        ray_args=ray_args, metrics=metrics))

    @app.command("join")
    def join_cmd(
        head: str = typer.Argument(..., help="Head GCS address, HEAD_IP:6379."),
        preset: str = options.preset(required=True, help="Preset (exports, cluster shape), e.g. qwen3-32b."), node_ip: str | None = NODE_IP, npus: int | None = NPUS, stack: str | None = STACK,
        temp_dir: str | None = TEMP_DIR, num_cpus: int | None = NUM_CPUS,
        token_file: str | None = typer.Option(None, "--token-file", help="The cluster's token (default: "
                                              "$GSPO_HOME/ray/auth_token, written by `gspo cluster up`)."),
        dashboard_port: int = typer.Option(8265, "--dashboard-port", help="The head's dashboard port."),
        wait: float = typer.Option(0, "--wait", help="Seconds to wait for the preset's NPU total."),
        sets: list[str] | None = options.sets("cluster.nnodes=2"), ray_args: list[str] | None = RAY_ARGS,
        metrics: bool = METRICS,
    ) -> None:
        """Start a Ray worker here that joins HEAD, with the cluster's token, the exports and this node's NPUs."""
        _start(NodeArgs("worker", preset, head, 6379, dashboard_port, node_ip, npus, stack, temp_dir, wait, sets,
                        num_cpus=num_cpus, token_file=token_file, ray_args=ray_args, metrics=metrics))

"""`gspo cluster up` (on the head) and `gspo cluster join HEAD` (on workers); registered on the cluster group."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from gspo_cli.cli import options

if TYPE_CHECKING:
    from gspo_cli.env.node_start import NodeArgs


def _start(a: NodeArgs) -> None:
    from gspo_cli.engines import node_resources
    from gspo_cli.env import node_up

    node_up.start(a, node_resources)


NODE_IP = typer.Option(None, "--node-ip", help="This node's IP (default: the one Ray picks).")
NPUS = typer.Option(None, "--npus", help="NPU count (default: from npu-smi).")
STACK = typer.Option(None, "--stack", help="vllm-ascend==X to judge the exports against.")
TEMP_DIR = typer.Option(None, "--temp-dir", help="Private folder (created 0700) for Ray's temp dir DIR/ray (default: "
                        "$GSPO_HOME/ray/tmp-NODE, or a new /tmp/gspo-ray-* where that is too long for Ray's sockets).")
NUM_CPUS = typer.Option(None, "--num-cpus", help="CPUs Ray may schedule on this node (default: all).")
METRICS = typer.Option(False, "--metrics/--no-metrics", help="Ray's Prometheus exporters: the per-node agent's, "
                       "and on a head the autoscaler's (44217) and dashboard's (44227) (default off: they listen on "
                       "every interface without auth; docs/ascend.md, Ports).")
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
        from gspo_cli.env.node_start import NodeArgs

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
        from gspo_cli.env.node_start import NodeArgs

        _start(NodeArgs("worker", preset, head, 6379, dashboard_port, node_ip, npus, stack, temp_dir, wait, sets,
                        num_cpus=num_cpus, token_file=token_file, ray_args=ray_args, metrics=metrics))

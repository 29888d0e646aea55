"""`gspo cluster up` (on the head) and `gspo cluster join HEAD` (on workers); registered on the cluster group."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def _start(role: str, preset: str, head: str | None, port: int, dashboard_port: int, node_ip: str | None,
           npus: int | None, stack: str | None, temp_dir: str | None, wait: float, sets: list[str] | None) -> None:
    from gspo_cli.config.presets import load_preset
    from gspo_cli.console import err
    from gspo_cli.env import raystart

    loaded = load_preset(preset, sets or [])
    p = raystart.plan_here(loaded, role=role, stack=stack, head_address=head, port=port,
                           dashboard_port=dashboard_port, node_ip=node_ip, npus=npus, temp_dir=temp_dir)
    for name, _value, why in p["exports"].exports:
        err.print(f"[dim]export {name}[/]" + (f" [dim]({why})[/]" if why else ""))
    for d in p["exports"].dropped:
        err.print(f"[dim]dropped {d['name']} (ignored since vllm-ascend {d['since']})[/]")
    err.print("$ " + " ".join(p["argv"][1:]) + "  (ray)")
    record = raystart.start(p)
    err.print(f"[green]Ray {role} started[/] (pid {record.pid}, NPU={record.npus}); log: {record.log_file}")
    if role == "head":
        err.print(f"Workers: gspo cluster join {record.address} --preset {loaded.name}")
    target = raystart.npu_wait_target(loaded, record, role=role, head=head, dashboard_port=dashboard_port)
    if wait > 0 and target is not None:
        _wait_for_npus(*target, wait)


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


def register(app: typer.Typer) -> None:
    """Add `up` and `join` to the `gspo cluster` group."""

    @app.command("up")
    def up_cmd(
        preset: str = options.preset(required=True, help="Preset (exports, cluster shape), e.g. qwen3-32b."),
        port: int = typer.Option(6379, "--port", help="GCS port of the head."),
        dashboard_port: int = typer.Option(8265, "--dashboard-port", help="Dashboard / Jobs API port."),
        node_ip: str | None = typer.Option(None, "--node-ip", help="This node's IP (default: Ray picks)."),
        npus: int | None = typer.Option(None, "--npus", help="NPU count (default: from npu-smi)."),
        stack: str | None = typer.Option(None, "--stack", help="vllm-ascend==X to judge the exports against."),
        temp_dir: str | None = typer.Option(None, "--temp-dir", help="Ray temp dir (default: Ray's)."),
        wait: float = typer.Option(600, "--wait", help="Seconds to wait for the preset's NPU total (0: no wait)."),
        sets: list[str] | None = options.sets("cluster.nnodes=2"),
    ) -> None:
        """Start the Ray head here with the preset's exports and NPU count, then wait for the workers."""
        _start("head", preset, None, port, dashboard_port, node_ip, npus, stack, temp_dir, wait, sets)

    @app.command("join")
    def join_cmd(
        head: str = typer.Argument(..., help="Head GCS address, HEAD_IP:6379."),
        preset: str = options.preset(required=True, help="Preset (exports, cluster shape), e.g. qwen3-32b."),
        node_ip: str | None = typer.Option(None, "--node-ip", help="This node's IP (default: Ray picks)."),
        npus: int | None = typer.Option(None, "--npus", help="NPU count (default: from npu-smi)."),
        stack: str | None = typer.Option(None, "--stack", help="vllm-ascend==X to judge the exports against."),
        temp_dir: str | None = typer.Option(None, "--temp-dir", help="Ray temp dir (default: Ray's)."),
        dashboard_port: int = typer.Option(8265, "--dashboard-port", help="The head's dashboard port."),
        wait: float = typer.Option(0, "--wait", help="Seconds to wait for the preset's NPU total."),
        sets: list[str] | None = options.sets("cluster.nnodes=2"),
    ) -> None:
        """Start a Ray worker here that joins HEAD, with the exports and this node's NPU count."""
        _start("worker", preset, head, 6379, dashboard_port, node_ip, npus, stack, temp_dir, wait, sets)

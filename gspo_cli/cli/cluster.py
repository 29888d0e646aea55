"""`gspo cluster status | down | smoke`: the Ray cluster gspo uses (embedded local head or a real cluster)."""

from __future__ import annotations

import typer

from gspo_cli.cli import options

app = typer.Typer(help="Start (up/join), show, test and stop the Ray cluster gspo uses.", no_args_is_help=True)


@app.command("status")
def status_cmd(address: str | None = options.address(),
               json_out: bool = options.json_out()) -> None:
    """Which head is in use and the resources its alive nodes register."""
    from gspo_cli.jobs import client as jobs

    info = jobs.cluster_status(address)
    if json_out:
        from gspo_cli.console import print_json

        print_json(info)
        return
    from rich.table import Table

    from gspo_cli.console import out

    kind = f"embedded local head (pid {info['embedded_pid']})" if info["embedded"] else f"from {info['source']}"
    out.print(f"[bold]Ray[/] {info['dashboard_url']}  {kind}")
    table = Table(title=f"{len(info['nodes'])} alive node(s)", title_justify="left")
    table.add_column("node")
    table.add_column("head")
    resources = sorted({k for n in info["nodes"] for k in n["resources"] if not k.startswith(("node:", "memory",
                                                                                              "object_store"))})
    for key in resources:
        table.add_column(key, justify="right")
    for node in info["nodes"]:
        table.add_row(node["node_ip"], "yes" if node["is_head"] else "",
                      *[f"{node['resources'].get(k, 0):g}" for k in resources])
    out.print(table)


@app.command("down")
def down_cmd() -> None:
    """Stop what gspo started: the embedded local head and a node of `cluster up/join` (never other Ray processes)."""
    from gspo_cli.console import err
    from gspo_cli.env import raystart
    from gspo_cli.jobs import local_head

    node = raystart.stop()  # the node `gspo cluster up/join` started on this host, if any
    if node is not None:
        err.print(f"Stopped the Ray {node.role} gspo started on this host (pid {node.pid}).")
    record = local_head.stop()
    if record is None:
        if node is None:
            err.print("No embedded Ray head or gspo-started node is recorded; nothing to stop. "
                      "(gspo never stops clusters it did not start.)")
        return
    err.print(f"Stopped the embedded Ray head (pid {record.pid}, {record.dashboard_url}).")


@app.command("smoke")
def smoke_cmd(
    address: str | None = options.address(),
    local: bool = options.local(),
    json_out: bool = options.json_out("Print the result as JSON."),
) -> None:
    """Run a job that connects back to the cluster and runs one task on every alive node."""
    from gspo_cli.jobs import client as jobs

    raise typer.Exit(jobs.run_job("cluster-smoke", None, preset_name="cluster", address=address, local=local,
                                  json_out=json_out))


# `gspo cluster up` / `gspo cluster join` (gspo_cli/cli/cluster_up.py)
from gspo_cli.cli import cluster_up as _cluster_up  # noqa: E402

_cluster_up.register(app)

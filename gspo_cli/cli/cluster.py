"""`gspo cluster status | down | smoke`: the Ray cluster gspo uses (embedded local head or a real cluster)."""

from __future__ import annotations

import typer

from gspo_cli.cli import options

app = typer.Typer(help="Start (up/join), show, test and stop the Ray cluster gspo uses.", no_args_is_help=True)


@app.command("status")
def status_cmd(address: str | None = options.address(),
               actors: bool = typer.Option(False, "--actors", help="Also list which Ray actor (verl trainer rank, "
                                           "vLLM server, TaskRunner, ...) runs on which node."),
               json_out: bool = options.json_out()) -> None:
    """Which cluster is in use (and why), its alive nodes and their resources, and the nodes Ray has lost.

    Exit code: 0 a cluster answers; 3 there is none to show (LSB's "not running"); 1 it cannot be reached."""
    from gspo_cli.console import emit
    from gspo_cli.jobs import client as jobs
    from gspo_cli.jobs import view_cluster as view
    from gspo_cli.jobs.target import NoClusterError

    try:
        info = jobs.cluster_status(address, with_actors=actors)
    except NoClusterError as none:
        emit(json_out, view.none_data(none), view.render_none, none)
        raise typer.Exit(view.NOT_RUNNING) from None
    emit(json_out, view.status_data(info), view.render_status, info)


@app.command("down")
def down_cmd() -> None:
    """Stop what gspo started on this host: its `cluster up/join` node and the embedded local head.

    Never other Ray processes, and never nodes gspo started on other hosts (run it there).
    """
    from gspo_cli.env import raystart
    from gspo_cli.jobs import local_head
    from gspo_cli.jobs import view_cluster as view

    node = raystart.stop()  # the node `gspo cluster up/join` started on this host, if any
    view.render_node_down(node)
    view.render_head_down(local_head.stop(), node)


@app.command("smoke")
def smoke_cmd(
    address: str | None = options.address(),
    local: bool = options.local(),
    json_out: bool = options.json_out("Print the result as JSON."),
) -> None:
    """Run a job that connects back to the cluster and runs one task on every alive node.

    With --local the check runs in this process against the cluster --address (or RAY_ADDRESS, or this host's
    node or embedded head) names, never one Ray finds on its own."""
    from gspo_cli.jobs import client as jobs

    if local:
        jobs.connect_in_process(address)
    raise typer.Exit(jobs.run_job(jobs.JobSpec("cluster-smoke", None, name="cluster"), address=address, local=local,
                                  json_out=json_out))


# `gspo cluster up` / `gspo cluster join` (gspo_cli/cli/cluster_up.py)
from gspo_cli.cli import cluster_up as _cluster_up  # noqa: E402

_cluster_up.register(app)

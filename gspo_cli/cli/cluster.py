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
    from gspo_cli.console import print_json
    from gspo_cli.jobs import client as jobs
    from gspo_cli.jobs.target import NoClusterError

    try:
        info = jobs.cluster_status(address, with_actors=actors)
    except NoClusterError as none:
        if json_out:
            print_json({"running": False, "message": none.message, "hint": none.hint})
        else:
            from gspo_cli.console import out

            out.print(f"{_sentence(none.message)}\n{_sentence(none.hint or '')}", highlight=False)
        raise typer.Exit(NOT_RUNNING) from None
    if json_out:
        print_json({"running": True, **info})
        return
    _render_status(info)


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}." if text else ""


NOT_RUNNING = 3  # `cluster status` with no cluster to show (LSB init-script status code 3: program is not running)


def _render_status(info: dict) -> None:
    from rich.table import Table

    from gspo_cli.console import out
    from gspo_cli.jobs.nodestate import describe

    kind = f"embedded local head (pid {info['embedded_pid']})" if info["embedded"] else f"from {info['source']}"
    if info.get("embedded_binds"):
        kind += f", listening on {info['embedded_binds']}"
    out.print(f"[bold]Ray[/] {info['dashboard_url']}  {kind}  auth: {info['auth']}", highlight=False)
    table = Table(title=f"{len(info['nodes'])} alive node(s)", title_justify="left")
    for col in ("node", "ip", "head"):
        table.add_column(col)
    resources = sorted({k for n in info["nodes"] for k in n["resources"] if not k.startswith(("node:", "memory",
                                                                                              "object_store"))})
    for key in resources:
        table.add_column(key, justify="right")
    for node in info["nodes"]:
        table.add_row(node["name"], node["node_ip"], "yes" if node["is_head"] else "",
                      *[f"{node['resources'].get(k, 0):g}" for k in resources])
    out.print(table)
    if info["resources"]:
        out.print("Total: " + ", ".join(f"{k}={info['resources'][k]:g}" for k in resources), highlight=False)
    for node in info.get("dead_nodes") or []:
        out.print(f"[red]dead[/] {describe(node)}", highlight=False)
    if "actors" in info:
        _render_actors(info["actors"])


def _render_actors(rows: list[dict]) -> None:
    from rich.table import Table

    from gspo_cli.console import out

    table = Table(title=f"{len(rows)} alive actor(s) by node", title_justify="left")
    for col in ("node", "actor", "what", "pid"):
        table.add_column(col)
    for r in rows:
        what = r["role"] + (f" {r['rank']}" if r["rank"] is not None else "")
        table.add_row(r["node"], r["name"] or r["class"], what, str(r["pid"] or ""))
    out.print(table)


@app.command("down")
def down_cmd() -> None:
    """Stop what gspo started on this host: its `cluster up/join` node and the embedded local head.

    Never other Ray processes, and never nodes gspo started on other hosts (run it there).
    """
    from gspo_cli.console import err
    from gspo_cli.env import raystart
    from gspo_cli.jobs import local_head

    node = raystart.stop()  # the node `gspo cluster up/join` started on this host, if any
    if node is not None:
        err.print(f"Stopped the Ray {node.role} gspo started on this host (node {node.hostname}, pid {node.pid}).")
    record = local_head.stop()
    if record is None:
        if node is None:
            err.print("No embedded Ray head or gspo-started node is recorded on this host; nothing to stop. "
                      "(gspo never stops Ray processes it did not start.)")
        return
    err.print(f"Stopped the embedded Ray head (pid {record.pid}, {record.dashboard_url}).")


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

"""How `gspo cluster status` prints: the cluster in use (and why), its alive nodes and their resources, the nodes Ray
has lost, the actors by node; or that there is none (exit NOT_RUNNING). With --json: `{"running": ..., ...}`. And
what `gspo cluster down` stopped."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from gspo_cli.console import err, out
from gspo_cli.jobs.nodestate import describe
from gspo_cli.jobs.target import NoClusterError

NOT_RUNNING = 3  # `cluster status` with no cluster to show (LSB init-script status code 3: program is not running)


def status_data(info: dict[str, Any]) -> dict[str, Any]:
    return {"running": True, **info}


def none_data(none: NoClusterError) -> dict[str, Any]:
    return {"running": False, "message": none.message, "hint": none.hint}


def render_none(none: NoClusterError) -> None:
    out.print(f"{_sentence(none.message)}\n{_sentence(none.hint or '')}", highlight=False)


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}." if text else ""


def render_status(info: dict[str, Any]) -> None:
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


def _render_actors(rows: list[dict[str, Any]]) -> None:
    table = Table(title=f"{len(rows)} alive actor(s) by node", title_justify="left")
    for col in ("node", "actor", "what", "pid"):
        table.add_column(col)
    for r in rows:
        what = r["role"] + (f" {r['rank']}" if r["rank"] is not None else "")
        table.add_row(r["node"], r["name"] or r["class"], what, str(r["pid"] or ""))
    out.print(table)


def render_node_down(node: Any) -> None:
    """`node`: the Ray node `cluster up/join` started on this host, None when there was none to stop."""
    if node is not None:
        err.print(f"Stopped the Ray {node.role} gspo started on this host (node {node.hostname}, pid {node.pid}).")


def render_head_down(record: Any, node: Any) -> None:
    """`record`: the embedded head stopped, None when there was none (and with no `node` either: nothing at all)."""
    if record is None:
        if node is None:
            err.print("No embedded Ray head or gspo-started node is recorded on this host; nothing to stop. "
                      "(gspo never stops Ray processes it did not start.)")
        return
    err.print(f"Stopped the embedded Ray head (pid {record.pid}, {record.dashboard_url}).")

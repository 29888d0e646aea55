"""`gspo cluster up` (the head) and `gspo cluster join HEAD` (a worker) on this node: the node service's steps
(env/node_start.py) in order, each followed by what it did, on stderr."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gspo_cli.console import err
from gspo_cli.env import node_start
from gspo_cli.env.node_start import NodeArgs
from gspo_cli.jobs.resources import NodeResources
from gspo_cli.shell import quote


def start(a: NodeArgs, node: Callable[[Any], NodeResources]) -> None:
    """The node service's steps (token policy, plan, start, NPU wait), each followed by what it did. `node`: what the
    preset's engine asks of a node (the CLI hands in engines.node_resources: env/ sits below engines/)."""
    from gspo_cli.config.presets import load_preset

    loaded = load_preset(a.preset, a.sets or [])
    token = node_start.node_token(a)
    _say_token(a, token)
    p = node_start.plan(a, loaded, token, node(loaded))
    _say_plan(a, p)
    record = node_start.start(p)
    _say_started(a, loaded, record)
    target = node_start.npu_wait_target(a, loaded, record)
    if target is not None:
        _wait_for_npus(*target, a.wait)


def _say_token(a: NodeArgs, token: Any) -> None:
    if a.role != "head":
        return
    if not a.auth:
        err.print("[yellow]warning:[/] --no-auth: anyone who can reach this head's ports can run any command "
                  "on every node")
        return
    err.print(f"Token auth on; token {'written to' if token.made else 'reused from'} {token.path} (mode 0600)")


def _say_plan(a: NodeArgs, p: dict[str, Any]) -> None:
    if a.metrics:
        err.print("[yellow]warning:[/] --metrics: Ray's metrics exporters listen on every interface of this node "
                  "without auth (read-only metrics: node IPs, temp paths, resource use); firewall it")
    for name, _value, why in p["exports"].exports:
        err.print(f"[dim]export {name}[/]" + (f" [dim]({why})[/]" if why else ""))
    for d in p["exports"].dropped:
        err.print(f"[dim]dropped {d['name']} (ignored since vllm-ascend {d['since']})[/]")
    err.print("$ " + " ".join(p["argv"][1:]) + "  (ray)")


def _say_started(a: NodeArgs, loaded: Any, record: Any) -> None:
    err.print(f"[green]Ray {a.role} started[/] (node {record.hostname}, pid {record.pid}, NPU={record.npus}); "
              f"log: {record.log_file}")
    if a.role == "head":
        err.print(f"On each other node: gspo cluster join {quote(record.address)} --preset {quote(loaded.name)}",
                  markup=False)
        err.print(f"From elsewhere:     export RAY_ADDRESS={record.dashboard_url}"
                  + (f"  (and RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH={record.token_file})" if record.token_file
                     else ""))
    err.print(f"gspo commands on this host now use this cluster ({record.dashboard_url}); `gspo cluster down` "
              "stops this node.")


def _wait_for_npus(url: str, want: int, wait: float) -> None:
    seen = node_start.wait_for_npus(url, want, wait, lambda n: err.print(f"[dim]NPU registered: {n:g}/{want}[/]"))
    if seen < want:
        err.print(f"[yellow]Only {seen:g} of {want} NPUs registered after {wait:g} s[/]: "
                  "join the other nodes, then `gspo cluster status`.")
    else:
        err.print(f"[green]All {want} NPUs registered.[/]")

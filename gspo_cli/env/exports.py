"""`gspo env exports`: the preset's exports fitted to the stack detected here (or named with --stack).

Obsolete variables are dropped with a comment saying what replaced them (and the replacement as a verl rollout
override where it is a vLLM setting); jemalloc is preloaded only if it is found; the socket-interface variables
are derived from the route to the Ray head. Values are shell-quoted.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import socket
from dataclasses import dataclass, field
from typing import Any

from gspo_cli.env import matrix
from gspo_cli.env.host import Host
from gspo_cli.errors import ConfigError


@dataclass
class Exports:
    preset: str
    stack: str | None  # vllm-ascend version the exports were judged against
    stack_source: str  # --stack, detected, or none
    exports: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value, why)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "preset": self.preset, "stack": {"vllm-ascend": self.stack, "source": self.stack_source},
            "exports": {n: v for n, v, _ in self.exports},
            "why": {n: w for n, _, w in self.exports if w},
            "dropped": self.dropped, "rollout_overrides": self.overrides, "notes": self.notes,
        }

    def as_sh(self) -> str:
        lines = [f"# gspo env exports --preset {self.preset}"
                 + (f"  (judged against vllm-ascend {self.stack}, {self.stack_source})" if self.stack
                    else "  (vllm-ascend unknown: nothing judged; pass --stack vllm-ascend==X)")]
        for name, value, why in self.exports:
            if why:
                lines.append(f"# {why}")
            lines.append(f"export {name}={shlex.quote(value)}")
        for d in self.dropped:
            lines.append(f"# dropped {d['name']}={shlex.quote(d['value'])}: ignored since vllm-ascend {d['since']}. "
                         f"Replacement: {d['replaced_by']} [{d['source']}]")
        if self.overrides:
            lines.append("# rollout overrides that replace dropped variables (add to the preset's overrides.verl):")
            lines += [f"#   {o}" for o in self.overrides]
        lines += [f"# {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def parse_stack(spec: str) -> str:
    m = re.fullmatch(r"\s*vllm[-_]ascend\s*==\s*([0-9][0-9A-Za-z.+\-]*)\s*", spec or "")
    if not m:
        raise ConfigError(f"--stack {spec!r} is not of the form vllm-ascend==X",
                          "e.g. --stack vllm-ascend==0.23.0")
    return m.group(1)


def route_to(host: Host, head: str) -> dict[str, str | None]:
    """The interface and source address this host uses to reach the head (`ip route get`)."""
    name = head.split("://")[-1].rsplit(":", 1)[0] if head.count(":") == 1 or "://" in head else head
    try:
        ip = str(ipaddress.ip_address(name))
    except ValueError:
        try:
            ip = socket.gethostbyname(name)
        except OSError:
            return {"ip": None, "dev": None, "src": None, "error": f"cannot resolve {name}"}
    res = host.run(["ip", "route", "get", ip], timeout=5)
    dev = re.search(r"\bdev\s+(\S+)", res.out)
    src = re.search(r"\bsrc\s+(\S+)", res.out)
    if not res.ok or not dev:
        return {"ip": ip, "dev": None, "src": None, "error": (res.err or res.out).strip()[:200] or "no route"}
    name = dev.group(1)
    if name == "lo" and not ipaddress.ip_address(ip).is_loopback:
        # The head is this host (`gspo cluster up`): the kernel routes its own address via `lo`, but the other
        # nodes reach it on the interface that holds the address; HCCL/GLOO bound to lo would be unreachable.
        owner = _interface_with(host, ip)
        if owner is None:
            return {"ip": ip, "dev": None, "src": None, "error": f"{ip} is local but on no interface `ip addr` lists"}
        name = owner
    return {"ip": ip, "dev": name, "src": src.group(1) if src else None, "error": None}


def _interface_with(host: Host, ip: str) -> str | None:
    """The interface holding address `ip` (`ip -o addr show`: `2: eth0    inet 10.0.0.2/24 ...`)."""
    res = host.run(["ip", "-o", "addr", "show"], timeout=5)
    for line in res.out.splitlines():
        m = re.match(r"\s*\d+:\s+([^\s@]+)\S*\s+inet6?\s+([^/\s]+)", line)
        if m and m.group(2) == ip:
            return m.group(1)
    return None


def build(preset: Any, *, host: Host | None = None, stack: str | None = None, facts: dict[str, Any] | None = None,
          head: str | None = None) -> Exports:
    """Fit the preset's env section to a stack. `facts` (from probes) supplies jemalloc and the detected stack."""
    host = host or Host()
    stack_source = "--stack" if stack else "none"
    if stack is None and facts is not None:
        detected = ((facts.get("python") or {}).get("meta") or {}).get("vllm-ascend")
        if detected:
            stack, stack_source = detected, "detected here"
    result = Exports(preset=preset.name, stack=stack, stack_source=stack_source)
    stale = matrix.obsolete_at(stack)
    eager = bool(preset.rollout.enforce_eager)
    npu = preset.cluster.device == "npu"
    for name, value in preset.env.vars.items():
        if name in stale:
            o = stale[name]
            result.dropped.append({"name": name, "value": value, "since": o.since, "replaced_by": o.replaced_by,
                                   "source": o.source, "override": o.override})
            if o.override and value.strip() not in ("0", "", "false", "False"):
                result.overrides.append(o.override)
            continue
        why = ""
        if name == "TASK_QUEUE_ENABLE" and npu:
            want = matrix.TASK_QUEUE_EAGER if eager else matrix.TASK_QUEUE_GRAPH
            if value != want:
                why = f"TASK_QUEUE_ENABLE {value} -> {want}: the rollout runs in {'eager' if eager else 'graph'} mode"
                value = want
        result.exports.append((name, value, why))
    if npu:
        # verl's NPU platform names this variable (verl/plugin/platform/platform_npu.py): Ray must not rewrite
        # ASCEND_RT_VISIBLE_DEVICES per actor, verl assigns devices to its colocated workers itself.
        if matrix.RAY_NOSET_VISIBLE not in preset.env.vars:
            result.exports.append((matrix.RAY_NOSET_VISIBLE, "1",
                                   "verl places its workers on devices itself; Ray must not set ASCEND_RT_VISIBLE_DEVICES"))
    if preset.env.jemalloc:
        found = (facts or {}).get("jemalloc")
        if found:
            result.exports.append(("LD_PRELOAD", found, "jemalloc found on this host (preset env.jemalloc)"))
        else:
            result.notes.append("jemalloc: the preset asks for it but no libjemalloc was found here; LD_PRELOAD not "
                                "set (apt install libjemalloc2, then rerun)")
    if head:
        route = route_to(host, head)
        if route["dev"]:
            why = f"interface of the route to the Ray head {route['ip']}"
            for name in ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME"):
                if name not in preset.env.vars:
                    result.exports.append((name, route["dev"], why))
                    why = ""
            if route["src"] and npu and "HCCL_IF_IP" not in preset.env.vars:
                result.exports.append(("HCCL_IF_IP", route["src"], "source address of that route"))
        else:
            result.notes.append(f"socket interfaces: no route to the head {head} ({route['error']}); "
                                "HCCL/GLOO/TP_SOCKET_IFNAME not set")
    else:
        result.notes.append("socket interfaces: pass --head HEAD_IP (or set cluster.address) to derive "
                            "HCCL/GLOO/TP_SOCKET_IFNAME from the route to the head")
    return result

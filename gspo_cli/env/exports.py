"""`gspo env exports` and the job env: the preset's node setup fitted to a vllm-ascend release, by one function.

`build` judges `env.vars` against the stack (--stack, else the one installed here, else the preset's
`env.vllm_ascend`): obsolete variables are dropped with a comment saying what replaced them (and the
replacement as a verl rollout override where it is a vLLM setting), TASK_QUEUE_ENABLE follows the rollout mode,
HCCL_EXEC_TIMEOUT respects the AIV cap, a variable verl sets itself is refused (`verl_env.py`). On top, for
this host only: jemalloc if found, the socket interfaces from the route to the Ray head. `job_env(preset)` is
the same result without the host-specific part: what a verl job's `runtime_env.env_vars` carries. The open-files
limit (`env.nofile`) is printed as a `ulimit -n` line. Every line is built by gspo_cli.shell (names
checked, values quoted, comments on one line).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass, field
from typing import Any

from gspo_cli.config import devices
from gspo_cli.env import matrix
from gspo_cli.env.host import Host
from gspo_cli.errors import ConfigError

# Decided per host (library path, network interface): never part of a job's env, which every node shares.
HOST_SPECIFIC = ("LD_PRELOAD", "HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_IF_IP")


@dataclass
class Exports:
    preset: str
    stack: str | None  # vllm-ascend version the exports were judged against
    stack_source: str  # --stack, detected, or none
    exports: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value, why)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nofile: int | None = None  # the preset's open-files limit (node setup, not a variable)
    unreviewed: list[str] = field(default_factory=list)  # the env-var rule's warnings (config/env_rule.py)

    def job_env(self) -> dict[str, str]:
        """The variables every node of a job gets: the exports minus what only this host can decide."""
        return {n: v for n, v, _ in self.exports if n not in HOST_SPECIFIC}

    def as_dict(self) -> dict[str, Any]:
        return {
            "preset": self.preset, "stack": {"vllm-ascend": self.stack, "source": self.stack_source},
            "exports": {n: v for n, v, _ in self.exports},
            "why": {n: w for n, _, w in self.exports if w},
            "dropped": self.dropped, "rollout_overrides": self.overrides, "notes": self.notes,
            "nofile": self.nofile, "unreviewed": self.unreviewed,
        }

    def as_sh(self) -> str:
        """The exports as a shell script to `eval` or `source`: every line is built by gspo_cli.shell (names
        checked as shell identifiers, values quoted, user text in comments kept on one line), so a preset's
        names, values, addresses and notes can never run a command."""
        from gspo_cli import shell

        judged = (f"judged against vllm-ascend {self.stack}, {self.stack_source}" if self.stack
                  else "vllm-ascend unknown: nothing judged; pass --stack vllm-ascend==X")
        lines = [shell.comment(f"gspo env exports --preset {self.preset}  ({judged})")]
        lines += [shell.comment(f"warning: {line}") for line in self.unreviewed]
        if self.nofile:
            lines.append(shell.comment("open files for Ray and its workers (`gspo cluster up/join` raise it before "
                                       "`ray start`)"))
            lines.append(f"ulimit -n {int(self.nofile)}")
        for name, value, why in self.exports:
            if why:
                lines.append(shell.comment(why))
            lines.append(_export(name, value))
        for d in self.dropped:
            lines.append(shell.comment(f"dropped {d['name']}={shell.quote(d['value'])}: ignored since vllm-ascend "
                                       f"{d['since']}. Replacement: {d['replaced_by']} [{d['source']}]"))
        if self.overrides:
            lines.append(shell.comment("rollout overrides that replace dropped variables (add to the preset's "
                                       "overrides.verl):"))
            lines += [shell.comment(f"  {o}") for o in self.overrides]
        lines += [shell.comment(n) for n in self.notes]
        return "\n".join(lines) + "\n"


def _export(name: str, value: str) -> str:
    """One `export` line; a name that is not a shell identifier is one clear error (the schema refuses it at load
    already: this is the second line of defence)."""
    from gspo_cli import shell

    try:
        return shell.export_line(name, value)
    except ValueError as exc:
        raise ConfigError(f"env.vars: {exc}", "a variable name is letters, digits and _, not starting with a "
                          "digit") from None


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


def refuse_verl_owned(preset: Any) -> None:
    """A preset variable that verl also puts in its actors' runtime env would make Ray's env merge fail."""
    from gspo_cli.env.verl_env import BY_NAME

    owned = [name for name in preset.env.vars if name in BY_NAME]
    if owned:
        first = BY_NAME[owned[0]]
        raise ConfigError(f"env.vars.{first.name}: verl sets {first.name} itself ({first.source}); setting it in "
                          "the job env makes Ray's runtime-env merge fail" + (f" (also: {', '.join(owned[1:])})"
                                                                              if owned[1:] else ""),
                          f"remove it from env.vars; instead: {first.instead}")


def _env_rule(preset: Any) -> list[str]:
    """The env-var rule again (the schema applied it at load): this function builds every job's environment, so a
    preset made without the schema's door cannot slip a refused name through. Returns the unreviewed lines."""
    from gspo_cli.config import env_rule

    problem = env_rule.refusal_message(preset.env.vars)
    if problem:
        raise ConfigError(f"env.vars: {problem}", "remove it from the preset (docs/security.md, the env-var rule)")
    return [v.line() for v in env_rule.unreviewed(preset.env.vars)]


def _hub_exports(preset: Any) -> list[tuple[str, str, str]]:
    """The variables of the preset's hub (config/hub.py), judged by the same env-var rule as env.vars: a refused
    name would be a bug here, and a preset setting the same variable to another value is refused (one fact, one
    place: `hub:`)."""
    from gspo_cli.config import env_rule
    from gspo_cli.config import hub as hubs

    hub = hubs.of(preset)
    out = []
    for name, value in hub.job_vars().items():
        verdict = env_rule.judge(name)
        if verdict.kind == env_rule.REFUSED:
            raise ConfigError(f"hub: {verdict.line()}", "report this: the hub's variables must pass the env-var rule")
        if name in preset.env.vars and preset.env.vars[name] != value:
            raise ConfigError(f"env.vars.{name} contradicts the hub ({hub.describe()})",
                              f"remove {name} from env.vars and choose the hub with hub.name / hub.endpoint")
        if name not in preset.env.vars:
            out.append((name, value, f"hub: {hub.describe()}"))
    return out


def _fit(preset: Any, name: str, value: str) -> tuple[str, str]:
    """(value, why): the preset's value adjusted to the rollout mode and HCCL's AIV cap."""
    npu = devices.of(preset).ascend  # `auto` resolved on this host (config/devices.py)
    if name == "TASK_QUEUE_ENABLE" and npu:
        eager = bool(preset.rollout.enforce_eager)
        want = matrix.TASK_QUEUE_EAGER if eager else matrix.TASK_QUEUE_GRAPH
        if value != want:
            return want, f"TASK_QUEUE_ENABLE {value} -> {want}: the rollout runs in {'eager' if eager else 'graph'} mode"
    mode = preset.env.vars.get("HCCL_OP_EXPANSION_MODE", "").strip().upper()
    if name == "HCCL_EXEC_TIMEOUT" and mode == "AIV":
        try:
            seconds = float(value)
        except ValueError:
            return value, ""
        if seconds == 0 or seconds > matrix.HCCL_AIV_TIMEOUT_CAP:
            cap = str(matrix.HCCL_AIV_TIMEOUT_CAP)
            return cap, (f"HCCL_EXEC_TIMEOUT {value} -> {cap}: with HCCL_OP_EXPANSION_MODE=AIV larger values are "
                         f"treated as {cap} (CANN HCCL user guide)")
    return value, ""


def _stack(preset: Any, stack: str | None, facts: dict[str, Any] | None) -> tuple[str | None, str]:
    """The vllm-ascend version to judge against, and where it came from (one rule for exports and the job env)."""
    if stack:
        return stack, "--stack"
    detected = (((facts or {}).get("python") or {}).get("meta") or {}).get("vllm-ascend")
    if detected:
        return detected, "detected here"
    if preset.env.vllm_ascend:
        return preset.env.vllm_ascend, "preset env.vllm_ascend"
    return None, "none"


def build(preset: Any, *, host: Host | None = None, stack: str | None = None, facts: dict[str, Any] | None = None,
          head: str | None = None) -> Exports:
    """Fit the preset's env section to a stack. `facts` (from probes) supplies jemalloc and the detected stack."""
    refuse_verl_owned(preset)
    unreviewed = _env_rule(preset)
    host = host or Host()
    stack, stack_source = _stack(preset, stack, facts)
    result = Exports(preset=preset.name, stack=stack, stack_source=stack_source, nofile=preset.env.nofile,
                     unreviewed=unreviewed)
    stale = matrix.obsolete_at(stack)
    npu = devices.of(preset).ascend  # `auto` resolved on this host (config/devices.py)
    for name, value in preset.env.vars.items():
        if name in stale:
            o = stale[name]
            result.dropped.append({"name": name, "value": value, "since": o.since, "replaced_by": o.replaced_by,
                                   "source": o.source, "override": o.override})
            if o.override and value.strip() not in ("0", "", "false", "False"):
                result.overrides.append(o.override)
            continue
        value, why = _fit(preset, name, value)
        result.exports.append((name, value, why))
    result.exports += _hub_exports(preset)
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


def job_env(preset: Any) -> Exports:
    """The exports every node of a job shares, judged against the preset's `env.vllm_ascend` (no probing)."""
    return build(preset, host=Host(), stack=None, facts=None, head=None)


def job_vars(preset: Any) -> dict[str, str]:
    """The variables a job of this preset gets beyond gspo's own (gspo_cli.jobs.client.run_job's `env_vars`)."""
    return job_env(preset).job_env() if getattr(preset, "env", None) is not None else {}

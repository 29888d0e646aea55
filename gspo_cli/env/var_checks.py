"""Doctor checks of the environment variables a job will see: the shell's, overridden by the preset's exports.

Obsolete variables for the installed vllm-ascend, HCCL_EXEC_TIMEOUT against the AIV cap, allocator and task-queue
settings, LD_PRELOAD / jemalloc, socket interface names, the HCCL buffer of an expert-parallel MoE rollout, the
FRACTAL_NZ weight format vLLM-Ascend's wake_up refuses (a node's shell can set it where preflight cannot see).
`env/checks.local_checks` runs them with the others.
"""

from __future__ import annotations

from typing import Any

from gspo_cli.checks import ERROR, OK, SKIP, WARN, Check
from gspo_cli.env import matrix
from gspo_cli.env.facts import effective_env, preset_attr, stack_versions
from gspo_cli.env.matrix import obsolete_at


def env_checks(facts: dict[str, Any], preset: Any, npu: bool) -> list[Check]:
    env = effective_env(facts, preset)
    v = stack_versions(facts)
    return [*_obsolete_checks(env, v), *_hccl_timeout_checks(env), *_runtime_var_checks(env, preset, npu),
            *_preload_checks(facts, preset), *_ifname_checks(env, facts), *_moe_ep_checks(env, preset, npu),
            *_nz_checks(env, v, npu)]


NZ_VAR = "VLLM_ASCEND_ENABLE_NZ"
NZ_WAKE_RAISES_FROM = "0.11.0"  # vllm-ascend PR #4023: NPUWorker.wake_up raises with NZ on (engines/verl/ascend_traps.py)


def _nz_checks(env: dict[str, tuple[str, str]], v: dict[str, Any], npu: bool) -> list[Check]:
    """VLLM_ASCEND_ENABLE_NZ not 0 where a job will see it: vllm-ascend >= 0.11 raises in wake_up, and verl 0.9.1
    sets it to 0 only when it is unset (workers/rollout/vllm_rollout/utils.py:44, :199-201)."""
    if not npu or NZ_VAR not in env or env[NZ_VAR][0].strip() in ("0", ""):
        return []
    if v["vllm_ascend"] and not matrix.in_range(matrix.base_release(v["vllm_ascend"]), NZ_WAKE_RAISES_FROM, None):
        return []
    value, origin = env[NZ_VAR]
    return [Check("env.nz_weight_format", ERROR, f"{NZ_VAR}={value} ({origin}): vllm-ascend "
                  f"{v['vllm_ascend'] or '(not found)'}'s wake_up raises ValueError ('FRACTAL_NZ mode is enabled') "
                  "at verl's first weight sync, and verl leaves a set variable alone [ascend-nz-wake-up]",
                  fix=f"unset {NZ_VAR} on the node or set env.vars.{NZ_VAR}: \"0\" in the preset")]


HCCL_DEFAULT_BUFFSIZE_MB = 200  # HCCL's default per-communicator buffer (CANN HCCL environment variable reference)
MOE_EP_BUFFSIZE_MB = 512  # vllm-ascend's Qwen3-MoE tutorial with --enable-expert-parallel: 512 on one node, 1024 across


def _moe_ep_checks(env: dict[str, tuple[str, str]], preset: Any, npu: bool) -> list[Check]:
    """An expert-parallel rollout (rollout.expert_parallel_size > 1) on NPUs: HCCL_BUFFSIZE as vllm-ascend sets it
    for MoE EP (docs/source/tutorials/Qwen3-Moe.md: 512 on one node, 1024 across nodes); the MoE token
    dispatch/combine runs through HCCL buffers of this size."""
    ep = preset_attr(preset, "rollout", "expert_parallel_size", 1) or 1
    if not npu or ep <= 1:
        return []
    nodes = preset_attr(preset, "cluster", "nnodes", 1) or 1
    want = MOE_EP_BUFFSIZE_MB * (2 if nodes > 1 else 1)
    raw = env.get("HCCL_BUFFSIZE", ("", ""))[0].strip()
    source = "vllm-ascend's Qwen3-MoE deployments with --enable-expert-parallel set 512 (one node) / 1024 (several)"
    if not raw:
        return [Check("env.moe_hccl_buffsize", WARN, f"rollout.expert_parallel_size {ep} and HCCL_BUFFSIZE unset "
                      f"(HCCL's default {HCCL_DEFAULT_BUFFSIZE_MB} MB); {source}",
                      fix=f"set env.vars.HCCL_BUFFSIZE: \"{want}\" in the preset")]
    try:
        value = int(raw)
    except ValueError:
        return [Check("env.moe_hccl_buffsize", ERROR, f"HCCL_BUFFSIZE={raw!r} is not a number of MB",
                      fix=f"set HCCL_BUFFSIZE={want}")]
    ok = value >= want
    return [Check("env.moe_hccl_buffsize", OK if ok else WARN, f"HCCL_BUFFSIZE={value} MB for an expert-parallel "
                  f"rollout (EP {ep}, {nodes} node(s)); {source}", fix="" if ok else f"set HCCL_BUFFSIZE={want}")]


def _obsolete_checks(env: dict[str, tuple[str, str]], v: dict[str, Any]) -> list[Check]:
    """Variables the installed vllm-ascend ignores (the version matrix's OBSOLETE_VARS)."""
    out: list[Check] = []
    stale = obsolete_at(v["vllm_ascend"])
    ours = [o for o in matrix.OBSOLETE_VARS if o.name in env]
    if ours and not v["vllm_ascend"]:
        out.append(Check("env.obsolete", SKIP, f"{', '.join(o.name for o in ours)} set; vllm-ascend not found, "
                         "cannot judge", fix="pass the stack to `gspo env exports --stack vllm-ascend==X`"))
    for o in ours:
        if o.name in stale:
            fix = f"drop it (`gspo env exports` does); replaced by {o.replaced_by}"
            if o.override:
                fix += f"; as a rollout override: {o.override}"
            out.append(Check(f"env.obsolete.{o.name}", WARN,
                             f"{o.name} ({env[o.name][1]}) is ignored by vllm-ascend {v['vllm_ascend']} "
                             f"(since {o.since}; {o.source})", fix=fix))
    return out


def _hccl_timeout_checks(env: dict[str, tuple[str, str]]) -> list[Check]:
    """HCCL_EXEC_TIMEOUT is a number, and within the cap of AIV mode."""
    mode = env.get("HCCL_OP_EXPANSION_MODE", ("", ""))[0].strip().upper()
    timeout = env.get("HCCL_EXEC_TIMEOUT", ("", ""))[0].strip()
    if not timeout:
        return []
    try:
        value = float(timeout)
    except ValueError:
        return [Check("env.hccl_timeout", ERROR, f"HCCL_EXEC_TIMEOUT={timeout!r} is not a number",
                      fix="set seconds, e.g. 1800")]
    if mode == "AIV" and (value > matrix.HCCL_AIV_TIMEOUT_CAP or value == 0):
        return [Check("env.hccl_timeout", WARN,
                      f"HCCL_EXEC_TIMEOUT={timeout} with HCCL_OP_EXPANSION_MODE=AIV is capped at "
                      f"{matrix.HCCL_AIV_TIMEOUT_CAP} s",
                      fix=f"set HCCL_EXEC_TIMEOUT<={matrix.HCCL_AIV_TIMEOUT_CAP}, or drop AIV mode if you need "
                      "a longer timeout")]
    return [Check("env.hccl_timeout", OK, f"HCCL_EXEC_TIMEOUT={timeout}" + (f" (mode {mode})" if mode else ""))]


def _runtime_var_checks(env: dict[str, tuple[str, str]], preset: Any, npu: bool) -> list[Check]:
    """Allocator settings set twice; TASK_QUEUE_ENABLE against the rollout's eager/graph mode."""
    out: list[Check] = []
    if "PYTORCH_NPU_ALLOC_CONF" in env and "PYTORCH_ALLOC_CONF" in env:
        a, b = env["PYTORCH_NPU_ALLOC_CONF"][0], env["PYTORCH_ALLOC_CONF"][0]
        out.append(Check("env.alloc_conf", WARN if a != b else OK,
                         f"PYTORCH_NPU_ALLOC_CONF={a!r} and PYTORCH_ALLOC_CONF={b!r} both set",
                         fix="keep one (torch_npu reads PYTORCH_NPU_ALLOC_CONF)" if a != b else ""))
    if preset is not None and npu and "TASK_QUEUE_ENABLE" in env:
        eager = bool(preset_attr(preset, "rollout", "enforce_eager", False))
        want = matrix.TASK_QUEUE_EAGER if eager else matrix.TASK_QUEUE_GRAPH
        have = env["TASK_QUEUE_ENABLE"][0].strip()
        out.append(Check("env.task_queue", OK if have == want else WARN,
                         f"TASK_QUEUE_ENABLE={have} with {'eager' if eager else 'graph'} mode rollout",
                         fix="" if have == want else f"set TASK_QUEUE_ENABLE={want} for "
                         f"{'eager' if eager else 'graph (ACL graph)'} mode"))
    return out


def _preload_checks(facts: dict[str, Any], preset: Any) -> list[Check]:
    """LD_PRELOAD entries exist; jemalloc found where the preset asks for it."""
    out: list[Check] = []
    preload = facts.get("ld_preload") or []
    missing = [p["path"] for p in preload if p.get("exists") is False]
    if preload:
        out.append(Check("env.ld_preload", ERROR if missing else OK,
                         f"LD_PRELOAD entries missing: {', '.join(missing)}" if missing
                         else f"LD_PRELOAD={':'.join(p['path'] for p in preload)}",
                         fix="fix or unset LD_PRELOAD (apt install libjemalloc2 for jemalloc)" if missing else ""))
    if preset is not None and preset_attr(preset, "env", "jemalloc", False):
        found = facts.get("jemalloc")
        out.append(Check("env.jemalloc", OK if found else WARN,
                         f"jemalloc at {found}" if found else "preset wants jemalloc; libjemalloc not found",
                         fix="" if found else "apt install libjemalloc2 (or yum install jemalloc); "
                         "`gspo env exports` skips it until then"))
    return out


def _ifname_checks(env: dict[str, tuple[str, str]], facts: dict[str, Any]) -> list[Check]:
    """Socket interface variables name interfaces this host has."""
    out: list[Check] = []
    ifaces = set(facts.get("interfaces") or [])
    for name in ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
        if name not in env or not ifaces:
            continue
        value = env[name][0].strip()
        bad = _bad_ifnames(name, value, ifaces)
        out.append(Check(f"env.ifname.{name}", ERROR if bad else OK,
                         f"{name}={value}: no interface {', '.join(bad)} here (have {', '.join(sorted(ifaces))})"
                         if bad else f"{name}={value}",
                         fix="regenerate with `gspo env exports --head HEAD_IP` on this host" if bad else ""))
    return out


def _bad_ifnames(var: str, value: str, ifaces: set[str]) -> list[str]:
    """Names that match nothing. HCCL/NCCL: `^=` excludes (not checked), `=` exact, else a prefix."""
    if value.startswith("^"):
        return []
    exact = value.startswith("=") or var in ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME")
    names = [n.strip() for n in value.lstrip("=").split(",") if n.strip()]
    if exact:
        return [n for n in names if n not in ifaces]
    return [n for n in names if not any(i.startswith(n) for i in ifaces)]

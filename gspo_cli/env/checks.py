"""Checks: judge probe facts (and a preset) into rows of name / status / found / fix. Pure: no I/O here.

Status (see `gspo_cli.checks`): ok, warn (works but is probably not what you want), error (the run will break
or misbehave), skip (does not apply here, or cannot be judged). `gspo env doctor` exits 1 when any row is an error.
"""

from __future__ import annotations

from typing import Any

from gspo_cli.checks import ERROR, OK, SKIP, WARN, Check, has_errors
from gspo_cli.config import devices, engine_support
from gspo_cli.env import matrix
from gspo_cli.env.facts import preset_attr, stack_versions
from gspo_cli.env.known_bad import known_bad_checks
from gspo_cli.env.matrix import find_row, in_range, same_release
from gspo_cli.env.var_checks import env_checks
from gspo_cli.signatures import tagged

HBM_BUSY_FRACTION = 0.10  # more HBM than this in use before the job starts: someone else is on the device


def exit_code(checks: list[Check]) -> int:
    return 1 if has_errors(checks) else 0


def expects_npu(facts: dict[str, Any], preset: Any) -> bool:
    if preset is not None:
        return devices.resolve(preset_attr(preset, "cluster", "device")).device.ascend
    return bool(facts["npu"].get("smi") or facts["cann"].get("found") or facts.get("davinci"))


# ------------------------------------------------------------------ Ascend software


def cann_checks(facts: dict[str, Any], npu: bool) -> list[Check]:
    cann = facts["cann"]
    if not npu:
        return [Check("cann", SKIP, "no Ascend NPU stack on this host", fix="only needed on Ascend hosts")]
    if not cann.get("found"):
        return [Check("cann.install", ERROR, "no CANN toolkit under /usr/local/Ascend or ~/Ascend",
                      fix="install the CANN toolkit matching your vllm-ascend (see `gspo env doctor` stack rows), "
                      "or set ASCEND_HOME_PATH to it")]
    out = [Check("cann.install", OK if cann.get("version") else WARN,
                 f"CANN {cann.get('version') or '?'} ({cann['layout']} layout) at {cann['home']}",
                 fix="" if cann.get("version") else "no ascend_toolkit_install.info / version.cfg: reinstall CANN")]
    if cann.get("sourced"):
        out.append(Check("cann.set_env", OK, f"ASCEND_HOME_PATH={cann['ascend_home_path']}"))
    else:
        missing = [n for n in ("ascend_home_path", "ascend_opp_path") if not cann.get(n)]
        what = (f"{', '.join(n.upper() for n in missing)} not set" if missing
                else f"ASCEND_HOME_PATH={cann['ascend_home_path']} has no runtime/ or compiler/")
        out.append(Check("cann.set_env", ERROR, f"set_env.sh not sourced: {what}",
                         fix=f"source {cann.get('set_env')} (in ~/.bashrc, before `ray start`)"))
    if cann.get("nnal") and cann.get("atb_home_path"):
        out.append(Check("cann.nnal", OK, f"ATB_HOME_PATH={cann['atb_home_path']}"))
    elif cann.get("nnal"):
        out.append(Check("cann.nnal", WARN, "NNAL/ATB installed but ATB_HOME_PATH not set",
                         fix=f"source {cann['nnal_set_env']}"))
    else:
        out.append(Check("cann.nnal", WARN, "NNAL/ATB not found (vllm-ascend needs libatb.so)",
                         fix="install the NNAL package of the same CANN version"))
    out.append(Check("cann.hccl", OK if cann.get("libhccl") else ERROR,
                     "lib64/libhccl.so present" if cann.get("libhccl") else f"no lib64/libhccl.so in {cann['home']}",
                     fix="" if cann.get("libhccl") else "reinstall the CANN toolkit (HCCL is part of it)"))
    fs = cann.get("home_fs")
    if fs in _network_fs():
        out.append(Check("cann.netfs", WARN, f"ASCEND_HOME_PATH is on {fs}",
                         fix="install CANN on local disk: it relies on file locks that network filesystems often lack"))
    return out


def _network_fs() -> set[str]:
    from gspo_cli.env.probes import NETWORK_FS

    return NETWORK_FS


def driver_checks(facts: dict[str, Any], npu: bool) -> list[Check]:
    if not npu:
        return []
    d = facts["driver"]
    if not d.get("found"):
        return [Check("driver.version", ERROR, "no driver/version.info under /usr/local/Ascend",
                      fix="install the Ascend NPU driver and firmware (HDK)")]
    return [Check("driver.version", OK, f"driver {d['version']}")]


def npu_checks(facts: dict[str, Any], preset: Any, npu_expected: bool) -> list[Check]:
    n = facts["npu"]
    if not npu_expected:
        return [Check("npu", SKIP, "no Ascend NPU on this host (npu-smi not found)", fix="only needed on Ascend hosts")]
    if not n.get("smi"):
        return [Check("npu.smi", ERROR, n.get("error") or "npu-smi failed",
                      fix="install the driver (npu-smi ships with it) and add /usr/local/bin to PATH")]
    devs = n["devices"]
    board = (n.get("board") or {}).get("kind")
    return [*_device_checks(devs, board), stale_process_check(n.get("processes") or []),
            *npu_fit_checks(devs, board, preset), *_link_checks(facts), _ray_npu_detect(facts, devs)]


def stale_process_check(procs: list[dict]) -> Check:
    """Processes on the devices (npu-smi's process section), named with the command that stops them: a leftover
    of an earlier run makes HCCL init fail (\"Maybe the last training process is running\") or the run OOM."""
    if not procs:
        return Check("npu.processes", OK, "no process holds an NPU")
    pids = sorted({p["pid"] for p in procs})
    where: dict[int, list[str]] = {}
    for p in procs:
        where.setdefault(p["pid"], []).append(f"{p['npu']}/{p['chip']}")
    held = ", ".join(f"{pid} on {' '.join(sorted(set(where[pid])))}" for pid in pids)
    mb = sum(p["memory_mb"] or 0 for p in procs)
    return Check("npu.processes", WARN, tagged("npu-stale-process", f"{len(pids)} process(es) hold NPUs "
                 f"({mb} MB): PID {held}"),
                 fix=f"if they are left from an earlier run: kill {' '.join(map(str, pids))} (or `ray stop` on this "
                 "node), wait 10 s, rerun doctor")


def _device_checks(devs: list[dict], board: str | None) -> list[Check]:
    """npu-smi's devices: listed, healthy, HBM not held by other processes."""
    names = sorted({d["name"] for d in devs})
    out = [Check("npu.smi", OK if devs else ERROR,
                 f"{len(devs)} device(s): {', '.join(names) or 'none'}" + (f" ({board.upper()})" if board else ""),
                 fix="" if devs else "npu-smi lists no devices: check the driver (dmesg) and firmware")]
    sick = [f"{d['npu']}/{d['chip']}={d['health']}" for d in devs if d["health"].upper() != "OK"]
    out.append(Check("npu.health", ERROR if sick else OK,
                     f"not OK: {', '.join(sick)}" if sick else "all devices OK",
                     fix="npu-smi info -t health -i <npu>; reset or replace the device, or drain this node" if sick
                     else ""))
    busy = [f"{d['npu']}/{d['chip']} {d['hbm_used_mb']}/{d['hbm_total_mb']} MB" for d in devs
            if d.get("hbm_total_mb") and d["hbm_used_mb"] / d["hbm_total_mb"] > HBM_BUSY_FRACTION]
    if devs:
        total = devs[0].get("hbm_total_mb")
        out.append(Check("npu.hbm", WARN if busy else OK,
                         f"HBM in use: {', '.join(busy)}" if busy else f"HBM free ({total} MB per device)",
                         fix="other processes hold device memory: npu-smi info shows them; stop them first" if busy
                         else ""))
    return out


def _count_check(devs: list[dict], board: str | None, want: Any) -> Check:
    """Devices are npu-smi's Chip rows: dies on A3 (two per card), cards on A2; torch_npu, Ray and verl count
    the same way, so cluster.devices_per_node is the die count on A3."""
    cards = len({d["npu"] for d in devs})
    unit = f" ({cards} cards x {len(devs) // cards} dies)" if cards and cards != len(devs) else ""
    msg = f"{len(devs)} devices{unit} here, preset expects {want} per node"
    if len(devs) == want:
        return Check("npu.count", OK, msg)
    if unit and want == cards:
        return Check("npu.count", ERROR, tagged("a3-dies-vs-cards", msg + ": the preset counts cards, but every "
                     "die is a device"), fix=f"--set cluster.devices_per_node={len(devs)} (dies, not cards)")
    return Check("npu.count", ERROR, msg, fix="pick a preset for this node shape, or --set "
                 f"cluster.devices_per_node={len(devs)}")


def npu_fit_checks(devs: list[dict], board: str | None, preset: Any) -> list[Check]:
    """The node's device count and board against the preset's cluster shape and profile."""
    out: list[Check] = []
    want = preset_attr(preset, "cluster", "devices_per_node")
    if preset is not None and devs:
        out.append(_count_check(devs, board, want))
    profile = preset_attr(preset, "cluster", "profile")
    if preset is not None and board and profile and profile.startswith(("a2", "a3")):
        same = profile.startswith(board)
        out.append(Check("npu.board", OK if same else WARN, f"host is {board.upper()}, preset profile {profile}",
                         fix="" if same else "memory estimates of the preset assume another board"))
    return out


def _link_checks(facts: dict[str, Any]) -> list[Check]:
    """The device NICs (hccn_tool) that HCCL uses across nodes."""
    hccn = facts.get("hccn") or {}
    if hccn.get("tool") is False:
        return [Check("npu.link", SKIP, "hccn_tool not found", fix="needed only for multi-node HCCL checks")]
    if not hccn.get("links"):
        return []
    down = [f"{k}={v}" for k, v in hccn["links"].items() if v != "UP"]
    return [Check("npu.link", ERROR if down else OK,
                  f"device NIC links not UP: {', '.join(down)}" if down else f"{len(hccn['links'])} device NIC links UP",
                  fix="hccn_tool -i <dev> -link -g; check cabling and the switch" if down else "")]


def _ray_npu_detect(facts: dict[str, Any], devs: list[dict]) -> Check:
    """How many NPUs Ray will register: `import acl` first, else a /dev/davinci[0-9]* glob."""
    acl = ((facts.get("python") or {}).get("acl")) or {}
    if acl.get("importable"):
        count = acl.get("device_count")
        good = count == len(devs)
        return Check("ray.npu_detect", OK if good else ERROR, f"`import acl` works: Ray sees {count} NPU(s)",
                     fix="" if good else "acl and npu-smi disagree: check ASCEND_RT_VISIBLE_DEVICES")
    seen = facts.get("davinci", 0)
    why = acl.get("error", "not probed")
    if seen == len(devs):
        return Check("ray.npu_detect", WARN, f"`import acl` fails ({why}); Ray falls back to /dev/davinci* and sees {seen}",
                     fix="source set_env.sh so acl imports; `gspo cluster up` also passes --resources NPU=N")
    return Check("ray.npu_detect", ERROR,
                 f"`import acl` fails ({why}); Ray's /dev/davinci* fallback sees {seen} of {len(devs)}",
                 fix="source set_env.sh before `ray start`, or start Ray with `gspo cluster up` "
                 f"(passes --resources '{{\"NPU\": {len(devs)}}}')")


def _dist_names(v: dict[str, Any]) -> dict[str, str | None]:
    """stack_versions' keys as pip distribution names (known_bad's table)."""
    names = {"torch_npu": "torch-npu", "vllm_ascend": "vllm-ascend"}
    return {names.get(k, k): val for k, val in v.items()}


def stack_checks(facts: dict[str, Any], preset: Any, npu: bool) -> list[Check]:
    v = stack_versions(facts)
    out = _python_checks(facts, v) + _verl_checks(v, preset) + known_bad_checks(_dist_names(v))
    if not npu:
        return out
    out.append(_torch_npu_check(facts, v))
    return out + _vllm_ascend_checks(v, preset)


def _python_checks(facts: dict[str, Any], v: dict[str, Any]) -> list[Check]:
    py = facts.get("python") or {}
    out: list[Check] = []
    for mode in ("meta", "torch_npu", "acl"):
        err = (py.get(mode) or {}).get("error")
        if err and mode != "acl":
            out.append(Check(f"python.probe.{mode}", ERROR, err,
                             fix="run the import by hand to see the full error: python -c 'import torch_npu'"))
    if v["python"]:
        ok = matrix.in_range(v["python"], "3.10", "3.13")
        out.append(Check("python.version", OK if ok else ERROR, f"Python {v['python']}",
                         fix="" if ok else "use Python >=3.10,<3.13 (verl and vllm-ascend)"))
    return out


def _verl_checks(v: dict[str, Any], preset: Any) -> list[Check]:
    """verl against its own requirements (ray, transformers)."""
    req = matrix.VERL_REQUIREMENTS
    if v["verl"]:
        bad = [f"{k} {v.get(k)}" for k in ("verl", "ray", "transformers")
               if v.get(k) and not in_range(v[k], req[k][1], req[k][3])]
        return [Check("stack.verl", ERROR if bad else OK,
                      f"verl {v['verl']}" + (f"; outside its requirements: {', '.join(bad)}" if bad else ""),
                      fix="pip install 'verl>=0.9.1,<0.10' 'transformers>=5.5.3,<5.11' 'ray[default]>=2.41'"
                      if bad else "")]
    if engine_support.needs(preset, "verl"):
        return [Check("stack.verl", ERROR, "verl not installed (the preset's engine is verl)",
                      fix="pip install 'gspo[verl]'")]
    return []


def _torch_npu_check(facts: dict[str, Any], v: dict[str, Any]) -> Check:
    if not v["torch_npu"]:
        return Check("stack.torch_npu", ERROR, "torch_npu not installed", fix="pip install torch-npu==<version "
                     "for your CANN> (see the stack.matrix row)")
    tn = ((facts.get("python") or {}).get("torch_npu") or {})
    cann_ok = matrix.TORCH_NPU_CANN.get(v["torch_npu"])
    if v["cann"] and cann_ok and not any(same_release(v["cann"], c) for c in cann_ok):
        return Check("stack.torch_npu", ERROR,
                     f"torch_npu {v['torch_npu']} is built for CANN {'/'.join(cann_ok)}, host has {v['cann']}",
                     fix=f"install CANN {cann_ok[0]} or the torch_npu built for CANN {v['cann']}")
    return Check("stack.torch_npu", OK if tn.get("installed", True) else WARN,
                 f"torch_npu {v['torch_npu']}" + (f" (CANN {v['torch_npu_cann']})" if v["torch_npu_cann"] else ""))


def _vllm_ascend_checks(v: dict[str, Any], preset: Any) -> list[Check]:
    """vllm-ascend installed, and CANN / torch / torch_npu / vllm / Python as its matrix row documents."""
    rollout = preset_attr(preset, "rollout", "name", "vllm")
    if not v["vllm_ascend"]:
        needed = rollout == "vllm"
        return [Check("stack.vllm_ascend", ERROR if needed else SKIP, "vllm-ascend not installed",
                      fix="pip install vllm-ascend==0.23.0 (with vllm==0.23.0)" if needed else "")]
    row = find_row(v["vllm_ascend"])
    if row is None:
        known = ", ".join(r.vllm_ascend for r in matrix.STACK_MATRIX)
        return [Check("stack.matrix", WARN, f"vllm-ascend {v['vllm_ascend']} is not in gspo's matrix ({known})",
                      fix="versions cannot be cross-checked; prefer a listed release")]
    wrong = _matrix_mismatches(v, row)
    return [Check("stack.matrix", ERROR if wrong else OK,
                  f"vllm-ascend {v['vllm_ascend']}: " + ("; ".join(wrong) if wrong else "CANN, torch, torch_npu, "
                                                        "vllm and Python match"),
                  fix=f"install the documented set: {row.source}" if wrong else "")]


def _matrix_mismatches(v: dict[str, Any], row) -> list[str]:
    wrong = []
    if v["cann"] and not any(same_release(v["cann"], c) for c in row.cann):
        wrong.append(f"CANN {v['cann']} (needs {'/'.join(row.cann)})")
    if v["torch"] and not same_release(matrix.base_release(v["torch"].split("+")[0]), row.torch):
        wrong.append(f"torch {v['torch']} (needs {row.torch})")
    if v["torch_npu"] and not any(same_release(v["torch_npu"], t) for t in row.torch_npu):
        wrong.append(f"torch_npu {v['torch_npu']} (needs {'/'.join(row.torch_npu)})")
    if v["vllm"] and not same_release(matrix.base_release(v["vllm"]), row.vllm):
        wrong.append(f"vllm {v['vllm']} (needs {row.vllm})")
    if v["python"] and not in_range(v["python"], *row.python):
        wrong.append(f"Python {v['python']} (needs >={row.python[0]},<{row.python[1]})")
    if not v["vllm"]:
        wrong.append(f"vllm not installed (needs {row.vllm})")
    return wrong


def home_checks(facts: dict[str, Any], preset: Any) -> list[Check]:
    h = facts["gspo_home"]
    out = [Check("gspo.home", OK if h["writable"] else ERROR,
                 f"$GSPO_HOME={h['path']} ({h.get('fs') or 'fs unknown'})" + ("" if h["writable"] else
                                                                               f": not writable ({h['error']})"),
                 fix="" if h["writable"] else "export GSPO_HOME=<a writable folder on storage every node mounts>")]
    nnodes = preset_attr(preset, "cluster", "nnodes", 1) or 1
    if nnodes > 1 and h.get("fs") and h["fs"] not in _network_fs():
        out.append(Check("gspo.home_shared", WARN,
                         f"$GSPO_HOME is on {h['fs']} but the preset spans {nnodes} nodes",
                         fix="point GSPO_HOME at shared storage (NFS, Lustre, ...); `--cluster` verifies with a marker"))
    return out


def nofile_checks(facts: dict[str, Any], preset: Any) -> list[Check]:
    """The open-files limit against the preset's node setup (`env.nofile`, upstream's `ulimit -n 32768`)."""
    from gspo_cli.env.node_setup import limits_fix

    want = preset_attr(preset, "env", "nofile")
    found = facts.get("nofile") or {}
    if not want:
        return []
    if "raw" not in found:
        return [Check("node.nofile", SKIP, f"cannot read `ulimit -n`: {found.get('error', 'not probed')}",
                      fix=limits_fix(want))]
    soft, hard = found["soft"], found["hard"]
    shown = f"ulimit -n {found['raw'][0]} (hard {found['raw'][1]})"
    if soft is None or soft >= want:  # None = unlimited
        return [Check("node.nofile", OK, f"{shown}, preset wants {want}")]
    hard_ok = hard is None or hard >= want
    return [Check("node.nofile", ERROR, f"{shown}: below the preset's {want}; Ray and verl's workers run out of "
                  "file descriptors" + ("" if hard_ok else f" (and the hard limit {hard} is below {want} too)"),
                  fix=limits_fix(want))]


def memory_checks(facts: dict[str, Any], preset: Any) -> list[Check]:
    """This node's RAM against the preset's `cluster.host_memory_gib`, which preflight judges the layout by."""
    mem = facts.get("memory") or {}
    have = mem.get("total_gib")
    if have is None:
        return [Check("node.memory", SKIP, mem.get("error", "not probed"))] if mem and preset is not None else []
    said = preset_attr(preset, "cluster", "host_memory_gib")
    if preset is None:
        return [Check("node.memory", OK, f"{have:g} GiB RAM")]
    if said is None and _this_machine(preset):
        return [Check("node.memory", OK, f"{have:g} GiB RAM (the preset runs on this machine's CPU)")]
    if said is None:
        return [Check("node.memory", WARN, f"{have:g} GiB RAM; the preset does not say its nodes' RAM, so preflight "
                      "cannot check host memory (offloaded state, vLLM weights asleep at level 1)",
                      ["cluster.host_memory_gib"], f"set cluster.host_memory_gib: {have:g} (the smallest node's)")]
    if have + 0.5 < said:
        return [Check("node.memory", ERROR, f"{have:g} GiB RAM, but the preset says {said:g} GiB per node: preflight "
                      "judged the layout against more memory than this node has", ["cluster.host_memory_gib"],
                      f"set cluster.host_memory_gib: {have:g} and rerun gspo train --dry-run")]
    return [Check("node.memory", OK, f"{have:g} GiB RAM, preset says {said:g} GiB per node")]


def _this_machine(preset: Any) -> bool:
    """A one-node CPU preset (a laptop's): its node is this machine, whose RAM the doctor just read; asking the
    preset to repeat it (cluster.host_memory_gib) is noise."""
    name = preset_attr(preset, "cluster", "device")
    return (name in devices.DEVICES and not devices.get(name).accelerator
            and (preset_attr(preset, "cluster", "nnodes") or 1) == 1)


def engine_env_checks(environment: dict[str, Any] | None, judged: list[Check]) -> list[Check]:
    """The preset's engine's environment (its spec's answer, `Environment.to_json()`, handed down by `cli/`: the
    env layer does not import the engines) as one row `engine.<name>`; a distribution a `stack.<dist>` row already
    judged is left to that row."""
    if not environment or environment.get("python") is None:
        return []
    name, needs = f"engine.{environment['engine']}", environment["needs"]
    stack = {c.name.removeprefix("stack.").replace("_", "-") for c in judged if c.name.startswith("stack.")}
    missing = [m for m in environment["missing"] if not m.get("dist") or m["dist"] not in stack]
    if not missing:
        left = len(environment["missing"])
        return [Check(name, OK, f"needs {needs}: " + (f"all there ({environment['python']})" if not left else
                                                      "the stack rows judge what is missing"))]
    fixes = list(dict.fromkeys(m["fix"] for m in missing))
    return [Check(name, ERROR, f"needs {needs}; {environment['python']} lacks "
                  + ", ".join(m["what"] for m in missing), fix="; ".join(fixes))]


def local_checks(facts: dict[str, Any], preset: Any = None, environment: dict[str, Any] | None = None
                 ) -> list[Check]:
    """Every check that needs only this host's facts (and the preset, and its engine's environment)."""
    npu = expects_npu(facts, preset)
    checks = [
        *cann_checks(facts, npu), *driver_checks(facts, npu), *npu_checks(facts, preset, npu),
        *stack_checks(facts, preset, npu), *env_checks(facts, preset, npu), *home_checks(facts, preset),
        *nofile_checks(facts, preset), *memory_checks(facts, preset),
    ]
    return checks + engine_env_checks(environment, checks)


def by_name(checks: list[Check]) -> dict[str, str]:
    """name -> status (for tests and scripts; the last row of a name wins)."""
    return {c.name: c.status for c in checks}


__all__ = ["Check", "OK", "WARN", "ERROR", "SKIP", "local_checks", "exit_code", "by_name", "expects_npu"]

"""Probes: read what is installed on a host. Each returns plain JSON-able data (facts); no judging here.

Everything goes through a `Host` (root path, environment, command runner), so tests point the probes at fixture
trees and fake `npu-smi` / `hccn_tool` executables. Python packages are probed in subprocesses, in parallel,
each with a timeout (stack_probe.py).
"""

from __future__ import annotations

import os
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gspo_cli.env.host import Host
from gspo_cli.env.matrix import vkey
from gspo_cli.env.node_setup import probe_nofile
from gspo_cli.env.npusmi import parse_board, parse_info, parse_processes
from gspo_cli.env.stack_probe import probe_python

NETWORK_FS = {
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "glusterfs", "fuse.glusterfs", "ceph", "fuse.ceph",
    "gpfs", "beegfs", "fuse.sshfs", "fuse.juicefs", "fuse.s3fs", "fuse.ossfs", "fuse.cunofs", "orangefs",
}
JEMALLOC_CANDIDATES = (
    "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
    "/usr/lib64/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2", "/usr/local/lib/libjemalloc.so.2",
    "/usr/local/lib/libjemalloc.so", "/usr/lib64/libjemalloc.so",
)
# Variables the checks judge; only these are recorded (values of secret-like names are never kept).
ENV_PREFIXES = ("ASCEND_", "HCCL_", "GLOO_", "TP_", "VLLM_", "PYTORCH_", "ATB_", "RAY_", "NCCL_", "HYDRA_")
ENV_NAMES = {"TASK_QUEUE_ENABLE", "LD_PRELOAD", "GSPO_HOME", "CPU_AFFINITY_CONF", "OMP_NUM_THREADS",
             "LD_LIBRARY_PATH", "PYTHONPATH"}


def is_secret(name: str, marked: tuple[str, ...] = ()) -> bool:
    """gspo's one secret rule (gspo_cli/private.py): the same names are hidden here, in jobs and in run folders."""
    from gspo_cli.private import is_secret_name

    return is_secret_name(name, marked)


def redact(name: str, value: str | None, marked: tuple[str, ...] = ()) -> str | None:
    if value is None:
        return None
    return "***" if is_secret(name, marked) else value


def env_snapshot(env: dict[str, str], extra: tuple[str, ...] = (), marked: tuple[str, ...] = ()) -> dict[str, str]:
    names = [n for n in env if n.startswith(ENV_PREFIXES) or n in ENV_NAMES or n in extra]
    return {n: redact(n, env[n], marked) for n in sorted(names)}


# ------------------------------------------------------------------ files


def read_kv(path: Path) -> dict[str, str]:
    """`key=value` lines (first wins); missing or unreadable file -> {}."""
    out: dict[str, str] = {}
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), value.strip())
    return out


def mounts(host: Host) -> list[tuple[str, str]]:
    """(mount point, fs type) from <root>/proc/mounts, longest mount point first."""
    rows = []
    try:
        text = host.path("/proc/mounts").read_text(errors="replace")
    except OSError:
        return rows
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            rows.append((parts[1].replace("\\040", " "), parts[2]))
    return sorted(rows, key=lambda r: len(r[0]), reverse=True)


def fs_type(host: Host, path: str) -> str | None:
    for point, kind in mounts(host):
        if path == point or path.startswith(point.rstrip("/") + "/") or point == "/":
            return kind
    return None


# ------------------------------------------------------------------ CANN


def _ascend_bases(host: Host) -> list[Path]:
    """Candidate install roots (the folder holding ascend-toolkit/, cann*/, driver/, nnal/)."""
    bases: list[Path] = []
    home_path = host.env.get("ASCEND_HOME_PATH")
    if home_path:
        p = host.path(home_path)
        for cand in [p, *p.parents]:
            if cand.name in ("ascend-toolkit",) or cand.name.startswith("cann"):
                bases.append(cand.parent)
                break
    bases.append(host.path("/usr/local/Ascend"))
    user_home = host.env.get("HOME")
    if user_home:
        bases.append(host.path(user_home) / "Ascend")
    seen, out = set(), []
    for b in bases:
        if b not in seen:
            seen.add(b)
            out.append(b)
    return out


def _cann_version(home: Path) -> tuple[str | None, str | None]:
    """(version, file it came from): install.info > version.cfg > compiler/version.info."""
    for info in sorted(home.glob("*-linux/ascend_toolkit_install.info")):
        version = read_kv(info).get("version")
        if version:
            return version, str(info)
    cfg = home / "version.cfg"
    if cfg.is_file():
        for key, value in read_kv(cfg).items():
            m = re.search(r":([^\]:]+)\]", value)
            if key.startswith(("toolkit_", "runtime_")) and m:
                return m.group(1).strip(), str(cfg)
    info = home / "compiler" / "version.info"
    version = read_kv(info).get("Version") or read_kv(info).get("version")
    if version:
        return version, str(info)
    return None, None


def probe_cann(host: Host) -> dict[str, Any]:
    facts: dict[str, Any] = {"found": False}
    for base in _ascend_bases(host):
        home = set_env = None
        layout = None
        cann_dirs = sorted((d for d in base.glob("cann-*") if d.is_dir()), key=lambda d: vkey(d.name[5:]))
        if (base / "cann").exists() or cann_dirs:
            layout = "cann"  # 8.5 and later: <base>/cann-<ver>, <base>/cann/set_env.sh
            home = base / "cann" if (base / "cann").is_dir() and _cann_version(base / "cann")[0] else (
                cann_dirs[-1] if cann_dirs else base / "cann")
            set_env = base / "cann" / "set_env.sh"
        elif (base / "ascend-toolkit").is_dir():
            layout = "ascend-toolkit"  # up to 8.3: <base>/ascend-toolkit/{latest,<ver>}
            tk = base / "ascend-toolkit"
            versions = sorted((d for d in tk.iterdir() if d.is_dir() and d.name != "latest"),
                              key=lambda d: vkey(d.name))
            home = tk / "latest" if (tk / "latest").exists() else (versions[-1] if versions else None)
            set_env = tk / "set_env.sh"
        if home is None:
            continue
        version, version_file = _cann_version(home)
        facts.update(
            found=True, layout=layout, base=host.unroot(base), home=host.unroot(home), version=version,
            version_file=host.unroot(Path(version_file)) if version_file else None,
            set_env=host.unroot(set_env) if set_env else None, set_env_exists=bool(set_env and set_env.is_file()),
            libhccl=(home / "lib64" / "libhccl.so").exists(),
            nnal_set_env=host.unroot(base / "nnal" / "atb" / "set_env.sh"),
            nnal=(base / "nnal" / "atb" / "set_env.sh").is_file(),
        )
        break
    ahp = host.env.get("ASCEND_HOME_PATH")
    facts["ascend_home_path"] = ahp
    facts["ascend_opp_path"] = host.env.get("ASCEND_OPP_PATH")
    facts["atb_home_path"] = host.env.get("ATB_HOME_PATH")
    facts["sourced"] = bool(
        ahp and facts["ascend_opp_path"]
        and host.path(ahp).joinpath("runtime").is_dir() and host.path(ahp).joinpath("compiler").is_dir()
    )
    facts["home_fs"] = fs_type(host, ahp or facts.get("home") or "/") if (ahp or facts.get("home")) else None
    return facts


def probe_driver(host: Host, cann: dict[str, Any] | None = None) -> dict[str, Any]:
    bases = [host.path(cann["base"])] if cann and cann.get("base") else []
    bases.append(host.path("/usr/local/Ascend"))
    for base in bases:
        info = base / "driver" / "version.info"
        kv = read_kv(info)
        if kv:
            return {"found": True, "version": kv.get("package_version") or kv.get("Version"),
                    "file": host.unroot(info)}
    return {"found": False, "version": None}


# ------------------------------------------------------------------ devices


def probe_npu(host: Host) -> dict[str, Any]:
    res = host.run(["npu-smi", "info"])
    if res.rc == 127:
        return {"smi": False, "error": "npu-smi not found on PATH", "devices": []}
    if not res.ok:
        return {"smi": False, "error": (res.err or res.out).strip()[-300:] or f"exit code {res.rc}", "devices": []}
    parsed = parse_info(res.out)
    board_res = host.run(["npu-smi", "info", "-t", "board", "-i", "0", "-c", "0"])
    board = parse_board(board_res.out) if board_res.ok else {"kind": None}
    return {"smi": True, "smi_version": parsed["version"], "devices": parsed["devices"], "board": board,
            "processes": parse_processes(res.out)}


def probe_davinci(host: Host) -> int:
    """What Ray's fallback counts: /dev/davinci[0-9]* (not davinci_manager)."""
    return len(list(host.path("/dev").glob("davinci[0-9]*")))


def probe_hccn(host: Host, devices: list[dict[str, Any]]) -> dict[str, Any]:
    tool = host.which("hccn_tool")
    default = host.path("/usr/local/Ascend/driver/tools/hccn_tool")
    if tool is None and default.is_file() and os.access(default, os.X_OK):
        tool = str(default)
    if tool is None:
        return {"tool": False, "links": {}}
    ids = [d["phy_id"] if d.get("phy_id") is not None else d["npu"] for d in devices] or []

    def link(dev: int) -> tuple[int, str]:
        res = host.run([tool, "-i", str(dev), "-link", "-g"], timeout=5)
        m = re.search(r"link status:\s*(\w+)", res.out, re.I)
        return dev, (m.group(1).upper() if m else f"unknown (exit {res.rc})")

    with ThreadPoolExecutor(max_workers=8) as pool:
        links = dict(pool.map(link, ids))
    return {"tool": True, "links": {str(k): v for k, v in sorted(links.items())}}


# ------------------------------------------------------------------ host bits


def probe_interfaces(host: Host) -> list[str]:
    net = host.path("/sys/class/net")
    try:
        return sorted(p.name for p in net.iterdir())
    except OSError:
        return []


def probe_jemalloc(host: Host) -> str | None:
    for cand in JEMALLOC_CANDIDATES:
        if host.path(cand).exists():
            return cand
    return None


def probe_preload(host: Host) -> list[dict[str, Any]]:
    value = host.env.get("LD_PRELOAD", "")
    items = [p for p in re.split(r"[:\s]+", value) if p]
    return [{"path": p, "exists": host.path(p).exists() if p.startswith("/") else None} for p in items]


def gspo_home_path(host: Host) -> str:
    return host.env.get("GSPO_HOME") or str(Path(host.env.get("HOME", "~")) / ".gspo")


def probe_gspo_home(host: Host) -> dict[str, Any]:
    home = gspo_home_path(host)
    path = host.path(home)
    writable, error = False, None
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".doctor-{uuid.uuid4().hex[:8]}"
        probe.write_text("ok")
        probe.unlink()
        writable = True
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc.strerror or exc}"
    return {"path": home, "writable": writable, "error": error, "fs": fs_type(host, home)}


def read_marker(host: Host, name: str) -> str | None:
    """Read a marker file in $GSPO_HOME (cross-node shared-storage check)."""
    try:
        return (host.path(gspo_home_path(host)) / name).read_text().strip()
    except OSError:
        return None


# ------------------------------------------------------------------ everything


def probe_memory(host: Host) -> dict[str, Any]:
    """This node's RAM (`MemTotal` of /proc/meminfo) in GiB; the host-memory verdict of preflight needs it."""
    path = host.path("/proc/meminfo")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return {"total_gib": None, "error": f"cannot read {host.unroot(path)}: {exc.strerror or exc}"}
    m = re.search(r"^MemTotal:\s+(\d+) kB", text, re.MULTILINE)
    if not m:
        return {"total_gib": None, "error": f"no MemTotal line in {host.unroot(path)}"}
    return {"total_gib": round(int(m.group(1)) / 1024**2, 1)}


def collect_facts(host: Host | None = None, *, python: str | None = None, with_python: bool = True,
                  extra_env: tuple[str, ...] = (), secret_env: tuple[str, ...] = ()) -> dict[str, Any]:
    """All probes for one host, the slow ones (subprocesses) in parallel. `secret_env`: names the preset marks
    secret (env.secrets), hidden like those the secret rule names."""
    host = host or Host()
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=3) as pool:
        py_future = pool.submit(probe_python, host, python) if with_python else None
        npu_future = pool.submit(probe_npu, host)
        cann = probe_cann(host)
        driver = probe_driver(host, cann)
        npu = npu_future.result()
        hccn = probe_hccn(host, npu.get("devices", [])) if npu.get("devices") else {"tool": None, "links": {}}
        pystack = py_future.result() if py_future else None
    return {
        "host": host.hostname,
        "root": str(host.root),
        "cann": cann,
        "driver": driver,
        "npu": npu,
        "hccn": hccn,
        "davinci": probe_davinci(host),
        "python": pystack,
        "interfaces": probe_interfaces(host),
        "jemalloc": probe_jemalloc(host),
        "ld_preload": probe_preload(host),
        "gspo_home": probe_gspo_home(host),
        "nofile": probe_nofile(host),
        "memory": probe_memory(host),
        "env": env_snapshot(host.env, extra_env, secret_env),
        "seconds": round(time.monotonic() - start, 3),
    }

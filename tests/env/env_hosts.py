"""Fixture hosts for the env tests: a root tree (CANN 8.3 or 9.x layout, driver, /dev, /sys/class/net,
/proc/mounts, jemalloc), fake `npu-smi` / `hccn_tool` / `ip` executables (real shell scripts on PATH) and a fake
site-packages (dist-info metadata, a `torch_npu` and an `acl` module) that the real Python probes read through
PYTHONPATH in their subprocesses. Nothing of gspo is mocked."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from gspo_cli.env.host import Host

FIX = Path(__file__).parent / "fixtures"
A2_INFO = (FIX / "npu_smi_info_a2_910b3_25.3.rc1.txt").read_text()
A3_INFO = (FIX / "npu_smi_info_a3_ascend910_25.3.rc1.txt").read_text()
A3_26X = (FIX / "npu_smi_info_a3_synthetic_26.x.txt").read_text()
_BOARD = (FIX / "board_a2_a3.txt").read_text().split("# A3: npu-smi info -t board -i 0 -c 0\n")
A2_BOARD, A3_BOARD = _BOARD[0].split("\n", 1)[1], _BOARD[1]

STACK_023 = {"torch": "2.10.0", "torch-npu": "2.10.0.post4", "vllm": "0.23.0", "vllm-ascend": "0.23.0"}
STACK_011 = {"torch": "2.7.1", "torch-npu": "2.7.1.post1", "vllm": "0.11.0", "vllm-ascend": "0.11.0"}


def a3_idle(text: str = A3_INFO) -> str:
    """The A3 capture with the busy dies' HBM usage set back to idle and its process rows removed."""
    text = re.sub(r"\b(5\d{4}|6\d{4})/ 65536", "3100 / 65536", text)
    return re.sub(r"(?m)^\| \d+\s+\d+\s+\| \d+\s+\|.*\n", "", text)


def _exe(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _dist(site: Path, name: str, version: str) -> None:
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def make_host(
    tmp: Path,
    *,
    board: str = "a3",
    cann: str | None = "9.1.0",  # "8.3.RC2" -> ascend-toolkit layout (8.3), else cann-<ver> layout
    sourced: bool = True,
    npu_info: str | None = None,
    davinci: int | None = None,
    stack: dict[str, str] | None = None,
    acl_count: int | None = -1,  # -1: as many as npu-smi shows; None: no acl module
    torch_npu_body: str | None = None,
    jemalloc: bool = True,
    links_down: tuple[int, ...] = (),
    env: dict[str, str] | None = None,
    home_fs: str = "nfs4",
    nofile: tuple[str, str] = ("65536", "65536"),  # soft, hard open-files limit in /proc/self/limits
    mem_total_kb: int | None = 1_610_612_736,  # /proc/meminfo MemTotal (1,536 GiB); None = no meminfo file
) -> Host:
    root = tmp / "root"
    bin_dir = tmp / "bin"
    site = tmp / "site"
    for d in (root, bin_dir, site):
        d.mkdir(parents=True, exist_ok=True)
    ascend = root / "usr/local/Ascend"
    host_env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": "/home/user", "PYTHONPATH": str(site),
                "GSPO_HOME": "/mnt/share/gspo", "LANG": "C.UTF-8"}
    info = npu_info if npu_info is not None else (a3_idle() if board == "a3" else A2_INFO)
    n_dev = len(re.findall(r"\| \d+\s+\d*\s*\| [0-9A-F]{4}:", info))
    if board:
        (bin_dir / "info.txt").write_text(info)
        (bin_dir / "board.txt").write_text(A3_BOARD if board == "a3" else A2_BOARD)
        _exe(bin_dir / "npu-smi", 'd=$(dirname "$0")\nif [ "$2" = "-t" ]; then cat "$d/board.txt"; '
             'else cat "$d/info.txt"; fi\n')
        (bin_dir / "down.txt").write_text("".join(f"{i}\n" for i in links_down))
        _exe(bin_dir / "hccn_tool", 'if grep -qx "$2" "$(dirname "$0")/down.txt"; then echo "link status: DOWN"; '
             'else echo "link status: UP"; fi\n')
        (ascend / "driver").mkdir(parents=True)
        (ascend / "driver/version.info").write_text((FIX / "driver_version.info").read_text())
        dev = root / "dev"
        dev.mkdir()
        for i in range(n_dev if davinci is None else davinci):
            (dev / f"davinci{i}").write_text("")
        (dev / "davinci_manager").write_text("")
    _exe(bin_dir / "ip", 'echo "$3 via 10.0.0.254 dev enp189s0f0 src 10.0.0.2 uid 0"\n')
    for name in ("lo", "eth0", "enp189s0f0"):
        (root / "sys/class/net" / name).mkdir(parents=True)
    (root / "proc").mkdir()
    (root / "proc/self").mkdir(parents=True, exist_ok=True)
    (root / "proc/self/limits").write_text("Limit                     Soft Limit           Hard Limit           Units\n"
                                           f"Max open files            {nofile[0]:<20} {nofile[1]:<20} files\n")
    if mem_total_kb is not None:
        (root / "proc/meminfo").write_text(f"MemTotal:       {mem_total_kb} kB\nMemFree:        1048576 kB\n")
    (root / "proc/mounts").write_text(f"/dev/sda1 / ext4 rw 0 0\nfiler:/share /mnt/share {home_fs} rw 0 0\n")
    (root / "mnt/share/gspo").mkdir(parents=True)
    if jemalloc:
        lib = root / "usr/lib/aarch64-linux-gnu"
        lib.mkdir(parents=True)
        (lib / "libjemalloc.so.2").write_text("")
    if cann:
        if cann.startswith("8.3"):
            home = ascend / "ascend-toolkit" / cann
            home.mkdir(parents=True)
            (ascend / "ascend-toolkit/latest").symlink_to(cann)
            (ascend / "ascend-toolkit/set_env.sh").write_text("# set_env\n")
            (home / "aarch64-linux").mkdir()
            (home / "aarch64-linux/ascend_toolkit_install.info").write_text(
                (FIX / "ascend_toolkit_install.info").read_text().replace("8.3.RC2", cann))
            (home / "version.cfg").write_text((FIX / "version.cfg").read_text())
            host_home = "/usr/local/Ascend/ascend-toolkit/latest"
        else:
            home = ascend / f"cann-{cann}"
            home.mkdir(parents=True)
            (ascend / "cann").symlink_to(f"cann-{cann}")
            (home / "set_env.sh").write_text("# set_env\n")
            (home / "aarch64-linux").mkdir()
            (home / "aarch64-linux/ascend_toolkit_install.info").write_text(
                f"package_name=Ascend-cann-toolkit\nversion={cann}\narch=aarch64\nos=linux\n")
            host_home = "/usr/local/Ascend/cann"
        for sub in ("runtime", "compiler", "opp", "lib64"):
            (home / sub).mkdir()
        (home / "lib64/libhccl.so").write_text("")
        (ascend / "nnal/atb").mkdir(parents=True)
        (ascend / "nnal/atb/set_env.sh").write_text("# atb\n")
        if sourced:
            host_env.update(ASCEND_HOME_PATH=host_home, ASCEND_OPP_PATH=f"{host_home}/opp",
                            ATB_HOME_PATH="/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1")
    for name, version in (stack or {}).items():
        _dist(site, name, version)
    if stack and "torch-npu" in stack:
        pkg = site / "torch_npu"
        (pkg / "npu").mkdir(parents=True)
        (pkg / "__init__.py").write_text(torch_npu_body or f"__version__ = {stack['torch-npu']!r}\n")
        (pkg / "npu/__init__.py").write_text("")
        (pkg / "npu/utils.py").write_text(f"def get_cann_version():\n    return {cann!r}\n")
    if acl_count is not None and board:
        count = n_dev if acl_count == -1 else acl_count
        (site / "acl.py").write_text(
            "class rt:\n    @staticmethod\n    def get_device_count():\n"
            f"        return {count}, 0\n\ndef get_soc_name():\n    return 'Ascend910_9392'\n")
    host_env.update(env or {})
    return Host(root=root, env=host_env, timeout=10.0, hostname="node-a")



CLEAN_VARS = {"RAY_DEDUP_LOGS": "0", "HYDRA_FULL_ERROR": "1", "TASK_QUEUE_ENABLE": "1",
              "HCCL_ASYNC_ERROR_HANDLING": "0"}

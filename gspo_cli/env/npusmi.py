"""Parse `npu-smi info` tables by pattern, not column position.

Handles the A2 (910B, one chip per NPU), A3 (two dies per NPU, `Chip  Phy-ID`) and the wider 26.x layouts, and
pairs written without a space (`62308/ 65536`). Each device is two table rows: `NPU Name | Health | ...` then
`Chip [Phy-ID] | Bus-Id | ... HBM-Usage`. The process table after the device table is read by `parse_processes`.
"""

from __future__ import annotations

import re
from typing import Any

_PAIR = re.compile(r"(\d+)\s*/\s*(\d+)")
_BUS = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")


def _cells(line: str) -> list[str] | None:
    line = line.rstrip()
    if not line.startswith("|") or set(line) <= set("|+-= "):
        return None
    return [c.strip() for c in line.strip("|").split("|")]


def _usage_order(header: list[str]) -> list[str]:
    """Names of the `X-Usage` pair columns in the order they appear in a header row."""
    return re.findall(r"([A-Za-z]+)-Usage", " ".join(header))


def parse_info(text: str) -> dict[str, Any]:
    version = None
    m = re.search(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)", text)
    if m:
        version = m.group(2)
    header2: list[str] = []
    devices: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    for raw in text.splitlines():
        cells = _cells(raw)
        if cells is None:
            continue
        joined = " ".join(cells)
        if "Process id" in joined or "Process name" in joined:
            break  # the process table follows; its rows look like chip rows
        if re.match(r"^(NPU|Chip)\b", cells[0]) and not re.match(r"^\d", cells[0]):
            if cells[0].startswith("Chip"):
                header2 = cells
            continue
        first = re.match(r"^(\d+)\s+(\S.*)$", cells[0])
        # The first row of a device: `<npu id> <name>` then a health word (OK, Warning, Alarm, Critical, ...).
        if first and len(cells) >= 2 and re.fullmatch(r"[A-Za-z][A-Za-z\- ]*", cells[1]):
            pending = {"npu": int(first.group(1)), "name": first.group(2).strip(), "health": cells[1]}
            continue
        second = re.match(r"^(\d+)(?:\s+(\d+))?$", cells[0])
        if second and pending is not None and len(cells) >= 2 and _BUS.match(cells[1]):
            pairs = [(int(a), int(b)) for c in cells[2:] for a, b in _PAIR.findall(c)]
            names = _usage_order(header2[2:]) if header2 else []
            hbm = None
            if "HBM" in names and len(pairs) == len(names):
                hbm = pairs[names.index("HBM")]
            elif pairs:
                hbm = pairs[-1]
            devices.append({
                "npu": pending["npu"], "chip": int(second.group(1)),
                "phy_id": int(second.group(2)) if second.group(2) is not None else None,
                "name": pending["name"], "health": pending["health"], "bus_id": cells[1],
                "hbm_used_mb": hbm[0] if hbm else None, "hbm_total_mb": hbm[1] if hbm else None,
            })
            pending = None
    return {"version": version, "devices": devices}


def parse_processes(text: str) -> list[dict[str, Any]]:
    """The process section of `npu-smi info` (`NPU Chip | Process id | Process name | Process memory(MB)`): one
    entry per process per device; `No running processes found in NPU n` rows are skipped."""
    out: list[dict[str, Any]] = []
    started = False
    for raw in text.splitlines():
        cells = _cells(raw)
        if cells is None:
            continue
        if "Process id" in " ".join(cells):
            started = True
            continue
        m = re.match(r"^(\d+)\s+(\d+)$", cells[0]) if started else None
        if m and len(cells) >= 4 and cells[1].isdigit():
            mem = re.match(r"\d+", cells[3])
            out.append({"npu": int(m.group(1)), "chip": int(m.group(2)), "pid": int(cells[1]),
                        "name": cells[2], "memory_mb": int(mem.group(0)) if mem else None})
    return out


def parse_board(text: str) -> dict[str, Any]:
    """`npu-smi info -t board -i 0 -c 0`: `NPU Name` is present on A3 (e.g. 9392), absent on A2."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if ":" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    chip = fields.get("Chip Name")
    if "NPU Name" in fields:
        kind = "a3"
    elif chip and re.match(r"910B", chip):
        kind = "a2"
    else:
        kind = None
    return {"kind": kind, "npu_name": fields.get("NPU Name"), "chip_name": chip, "chip_type": fields.get("Chip Type")}

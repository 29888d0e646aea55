"""The Python stack probe: installed versions of torch, torch-npu, vllm, vllm-ascend, transformers, ray, verl,
numpy; `import torch_npu` (and the CANN it reports); `import acl` (device count, SoC). Each runs in its own
subprocess of the probed interpreter, in parallel, with a timeout, so a hanging import cannot hang the doctor.
Facts only, no judging; the other host probes are probes.py.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gspo_cli.env.host import Host

_PY_PROBE = r'''
import importlib.util, json, platform, sys
mode = sys.argv[1]
out = {}
try:
    if mode == "meta":
        from importlib import metadata
        out["python"] = platform.python_version()
        out["executable"] = sys.executable
        for dist in ("torch", "torch-npu", "vllm", "vllm-ascend", "transformers", "ray", "verl", "numpy"):
            try:
                out[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                out[dist] = None
            except Exception as exc:  # a broken install: no version, and the cause kept
                out[dist] = None
                out.setdefault("errors", {})[dist] = type(exc).__name__ + ": " + str(exc)[:300]
    elif mode == "torch_npu":
        if importlib.util.find_spec("torch_npu") is None:
            out = {"installed": False}
        else:
            import torch_npu
            out = {"installed": True, "version": getattr(torch_npu, "__version__", None), "cann": None}
            tried = []
            for getter in ("torch_npu.npu.utils", "torch_npu.npu"):
                try:
                    mod = importlib.import_module(getter)
                    out["cann"] = str(mod.get_cann_version())
                    break
                except Exception as exc:  # not in this torch_npu, or it fails: the next getter is tried
                    tried.append(getter + ": " + type(exc).__name__ + ": " + str(exc)[:200])
            if out["cann"] is None:
                out["cann_error"] = "; ".join(tried)
    elif mode == "acl":
        if importlib.util.find_spec("acl") is None:
            out = {"importable": False, "error": "No module named 'acl'"}
        else:
            import acl
            count, ret = acl.rt.get_device_count()
            out = {"importable": True, "device_count": count if ret == 0 else None, "ret": ret}
            try:
                out["soc"] = acl.get_soc_name()
            except Exception as exc:  # the SoC name is a fact among others: its failure is kept, not raised
                out["soc"] = None
                out["soc_error"] = type(exc).__name__ + ": " + str(exc)[:300]
except BaseException as exc:
    out = {"error": type(exc).__name__ + ": " + str(exc)[:300]}
sys.stdout.write("\nGSPO_PROBE " + json.dumps(out) + "\n")
'''

PY_TIMEOUTS = {"meta": 15.0, "torch_npu": 90.0, "acl": 30.0}


def _py_probe(host: Host, python: str, mode: str, timeout: float) -> dict[str, Any]:
    start = time.monotonic()
    res = host.runner([python, "-c", _PY_PROBE, mode], host.env, timeout)
    took = round(time.monotonic() - start, 3)
    for line in reversed(res.out.splitlines()):
        if line.startswith("GSPO_PROBE "):
            data = json.loads(line[len("GSPO_PROBE "):])
            data["seconds"] = took
            return data
    tail = (res.err or res.out).strip().splitlines()[-1:] or [f"exit code {res.rc}"]
    kind = "timed out" if res.rc == 124 else f"crashed (exit {res.rc})"
    return {"error": f"probe {kind}: {tail[0][:300]}", "seconds": took}


def probe_python(host: Host, python: str | None = None, timeouts: dict[str, float] | None = None) -> dict[str, Any]:
    """Versions of the Python stack, `import torch_npu` and `import acl`, each in its own subprocess, in parallel."""
    python = python or sys.executable
    limits = {**PY_TIMEOUTS, **(timeouts or {})}
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {mode: pool.submit(_py_probe, host, python, mode, limit) for mode, limit in limits.items()}
        return {mode: fut.result() for mode, fut in futures.items()}


# What an engine needs of an interpreter (engines/verl/environment.py asks; the judging is the engine's): installed
# distributions' versions, where modules are (found as files: a dotted name's parents are not imported, so probing
# `verl.plugin.platform.platform_manager` costs no `import verl`) and whether a module exports a name (the module is
# imported: keep these to packages whose top level is lazy, like trl's).
_NEEDS_PROBE = r'''
import importlib, importlib.util, json, os, sys
from importlib import metadata
req = json.loads(sys.argv[1])
out = {"python": sys.executable, "dists": {}, "modules": {}, "exports": {}}

def locate(name):
    top, _, rest = name.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):  # ValueError: a module in sys.modules without a spec, or an empty name
        return None
    if spec is None:
        return None
    if not rest:
        return spec.origin or "namespace package"
    for base in spec.submodule_search_locations or []:
        path = os.path.join(base, *rest.split("."))
        for cand in (path + ".py", os.path.join(path, "__init__.py")):
            if os.path.isfile(cand):
                return cand
    return None

for dist in req.get("dists", []):
    try:
        out["dists"][dist] = metadata.version(dist)
    except metadata.PackageNotFoundError:
        out["dists"][dist] = None
    except Exception as exc:  # a broken install: no version, and the cause kept
        out["dists"][dist] = None
        out.setdefault("errors", {})[dist] = type(exc).__name__ + ": " + str(exc)[:300]
for name in req.get("modules", []):
    out["modules"][name] = locate(name)
for ref in req.get("exports", []):
    mod, _, attr = ref.partition(":")
    if locate(mod) is None:
        out["exports"][ref] = None
        continue
    try:
        out["exports"][ref] = attr in dir(importlib.import_module(mod))
    except BaseException as exc:
        out["exports"][ref] = False
        out.setdefault("errors", {})[ref] = type(exc).__name__ + ": " + str(exc)[:300]
sys.stdout.write("\nGSPO_PROBE " + json.dumps(out) + "\n")
'''
NEEDS_TIMEOUT = 60.0


def probe_needs(python: str, *, dists: tuple[str, ...] = (), modules: tuple[str, ...] = (),
                exports: tuple[str, ...] = (), host: Host | None = None, timeout: float = NEEDS_TIMEOUT
                ) -> dict[str, Any]:
    """Facts about `python`'s packages, in one subprocess of it: {"python", "dists": {name: version | None},
    "modules": {dotted name: file | None}, "exports": {"module:name": bool | None (module absent)}}, or
    {"error": ...} when the interpreter could not answer (missing, crashed, timed out)."""
    request = json.dumps({"dists": list(dists), "modules": list(modules), "exports": list(exports)})
    host = host or Host()
    start = time.monotonic()
    res = host.runner([python, "-c", _NEEDS_PROBE, request], host.env, timeout)
    for line in reversed(res.out.splitlines()):
        if line.startswith("GSPO_PROBE "):
            data = json.loads(line[len("GSPO_PROBE "):])
            data["seconds"] = round(time.monotonic() - start, 3)
            return data
    tail = (res.err or res.out).strip().splitlines()[-1:] or [f"exit code {res.rc}"]
    kind = "timed out" if res.rc == 124 else f"crashed (exit {res.rc})"
    return {"error": f"probe of {python} {kind}: {tail[0][:300]}", "python": python}

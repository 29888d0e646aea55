"""Test-only: record one real verl policy update (GSPO_TEST_RECORD_UPDATE=DIR), for the same-batch equivalence test.

Loaded by the CPU platform plugin (platform.py) inside verl's processes, only with VERL_PLATFORM=cpu and the
variable set in the process environment (a preset cannot set it: config/schema.py refuses GSPO_TEST_* in
env.vars; jobs/client.py announces the switch when it travels with a job). The first actor update of the
process (verl 0.9.1 verl/workers/engine_workers.py `TrainingWorker.train_mini_batch`) is written to DIR:
`before.pt` (the actor's full state dict before it), each mini-batch exactly as verl's loop handed it to
`train_batch` (`mini_<i>.pt`: its tensors, nested ones as lists of rows; `mini_<i>.json`: its scalar settings),
`after.pt` (the state dict after the last mini-batch) and `metrics.json` (verl's reduced actor metrics, written
last: the mark of a complete recording). Later updates, and every update of a process that finds a complete
recording in DIR (a restarted verl), run untouched. Files are written to a temp name and renamed; tensors only (loadable with weights_only).
"""

from __future__ import annotations

import functools
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

RECORD_ENV = "GSPO_TEST_RECORD_UPDATE"
WORKERS_MODULE = "verl.workers.engine_workers"


def _state(engine: Any) -> dict[str, Any]:
    import torch

    out = {}
    for name, value in engine.module.state_dict().items():
        full = value.full_tensor() if hasattr(value, "full_tensor") else value  # FSDP2 DTensor, world 1
        out[name] = full.detach().to("cpu", torch.float32).clone()
    return out


def _save(obj: Any, path: Path) -> None:
    import torch

    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".json":
        tmp.write_text(json.dumps(obj, indent=1, default=str))
    else:
        torch.save(obj, tmp)
    os.replace(tmp, path)


def _mini_batch(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(tensors, settings) of one mini-batch TensorDict; nested (jagged) tensors as lists of their rows."""
    import torch

    tensors: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for key in data.keys():
        value = data.get(key)
        if isinstance(value, torch.Tensor):
            rows = value.unbind() if value.is_nested else None
            tensors[key] = [r.detach().cpu().clone() for r in rows] if rows is not None else value.detach().cpu().clone()
        else:
            raw = getattr(value, "data", value)  # NonTensorData wraps its value
            settings[key] = raw if isinstance(raw, (int, float, str, bool, list, type(None))) else repr(raw)
    return tensors, settings


def _patch(module: types.ModuleType, out: Path) -> None:
    worker = module.TrainingWorker
    # A folder that already holds a recording keeps it: a restarted verl (the job wrapper's restart) records nothing.
    state = {"recording": False, "done": (out / "metrics.json").exists(), "mini": 0}
    train_mini_batch, train_batch = worker.train_mini_batch, worker.train_batch

    @functools.wraps(train_batch)
    def recorded_batch(self: Any, data: Any) -> Any:
        if state["recording"]:
            tensors, settings = _mini_batch(data)
            _save(tensors, out / f"mini_{state['mini']}.pt")
            _save(settings, out / f"mini_{state['mini']}.json")
            state["mini"] += 1
        return train_batch(self, data)

    @functools.wraps(train_mini_batch)
    def recorded_update(self: Any, data: Any) -> Any:
        if state["done"]:
            return train_mini_batch(self, data)
        state["recording"] = True
        out.mkdir(parents=True, exist_ok=True)
        _save(_state(self.engine), out / "before.pt")
        try:
            result = train_mini_batch(self, data)
        finally:
            state["recording"], state["done"] = False, True
        _save(_state(self.engine), out / "after.pt")
        metrics = getattr(result, "get", lambda *_: None)("metrics") if result is not None else None
        _save({"metrics": getattr(metrics, "data", metrics), "mini_batches": state["mini"]}, out / "metrics.json")
        print(f"{RECORD_ENV}: recorded the first actor update ({state['mini']} mini-batches) in {out}",
              file=sys.stderr, flush=True)
        return result

    worker.train_batch = recorded_batch
    worker.train_mini_batch = recorded_update


def install(after_import: Any) -> None:
    """Called by platform.py under VERL_PLATFORM=cpu: patch verl's actor worker when the switch is set."""
    target = os.environ.get(RECORD_ENV, "").strip()
    if not target:
        return
    print(f"{RECORD_ENV}={target}: test control active in pid {os.getpid()}: the first actor update is recorded",
          file=sys.stderr, flush=True)
    after_import(WORKERS_MODULE, functools.partial(_patch, out=Path(target)))

"""`gspo train --dry-run` for the native engine: its own preflight, printed verdict first; creates nothing.

Checks what the job would trip on first: the prepared data (present, prepared with these settings), the model
(a local folder with config.json, builtin:tiny, a pinned hub model's prepared folder: models/hub_model.py, or a
hub id that is cached or reachable), and memory (weights,
gradients and the two AdamW states against the host's available memory when training on the CPU). No torch import:
sizes come from the model's config.json. The run folder is named, not created.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli.checks import ERROR, INFO, OK, WARN, Check
from gspo_cli.errors import GspoError

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import TrainRequest

GiB = 1024**3
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def _data_check(req) -> Check:
    from gspo_cli.engines.native.inputs import check_inputs

    try:
        check_inputs(req)
    except GspoError as exc:
        return Check("data", ERROR, exc.message, ["paths.data_dir", "data.train.source"], exc.hint or "")
    from gspo_cli.data.manifest import is_legacy, train_file

    path = train_file(req.preset)
    old = " (a set prepared before keyed folders; its manifest matches this preset)" if is_legacy(path.parent) else ""
    return Check("data", OK, f"prepared: {path}{old}")


def _model_config(path: str, preset=None, ref: str | None = None) -> tuple[Check, Path | None]:
    """(model check, the folder holding its config.json, or None)."""
    if path.startswith("builtin:"):
        from gspo_cli.models import builtin

        name = path[len("builtin:"):]
        if name not in builtin.names():
            return Check("model", ERROR, f"unknown built-in model {path!r}", ["model.path"],
                         "the built-in models are " + ", ".join(f"builtin:{n}" for n in builtin.names())), None
        cfg = builtin.default_dir(name) / "config.json"
        built = cfg.is_file()
        return Check("model", OK, f"{path} " + ("(built)" if built else "(built on first use, under 1 MB)")), \
            (cfg.parent if built else None)
    local = Path(path).expanduser()
    if local.exists():
        cfg = local / "config.json"
        if not cfg.is_file():
            return Check("model", ERROR, f"{local} has no config.json (not a Hugging Face model folder)",
                         ["model.path"], "point model.path at the folder that holds config.json"), None
        return Check("model", OK, f"local folder {local}"), local
    from gspo_cli.models import hub_model

    if preset is not None and (pinned := hub_model.check(preset, ref)) is not None:
        return pinned  # a pinned hub model (or any on ModelScope): its prepared folder, or the command to make it
    from gspo_cli.models.reachable import check_hub_id

    hub = check_hub_id(path)
    return Check("model", OK if hub.ok else ERROR, hub.message, ["model.path"], hub.fix or ""), None


def _params(folder: Path) -> int | None:
    from gspo_cli.sizing.model_facts import model_facts

    facts = model_facts(str(folder))
    return facts.params if facts is not None else None


def _available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _memory_check(preset: Preset, folder: Path | None) -> Check:
    params = _params(folder) if folder is not None else None
    if params is None and preset.model.path.startswith("builtin:"):
        return Check("memory", OK, f"{preset.model.path} needs a few MB")
    if params is None:
        return Check("memory", INFO, "model size unknown before download: not estimated")
    need = params * DTYPE_BYTES.get(preset.model.dtype, 4) * 4  # weights, gradients, AdamW exp_avg + exp_avg_sq
    what = f"{params / 1e6:.1f}M params: {need / GiB:.2f} GiB for weights, gradients and AdamW state (+ activations)"
    device = preset.trainer.device
    if device not in ("cpu", "auto"):
        return Check("memory", INFO, f"{what}; {device} memory is checked when the job starts")
    free = _available_bytes()
    if free is None:
        return Check("memory", INFO, what)
    if need > free:
        return Check("memory", ERROR if device == "cpu" else WARN, f"{what}; host has {free / GiB:.1f} GiB available",
                     ["model.path", "model.dtype"], "a smaller model, model.dtype=bfloat16, or a bigger host")
    return Check("memory", OK, f"{what}; host has {free / GiB:.1f} GiB available")


def checks(req: TrainRequest) -> list[Check]:
    """The native preflight: data, model, memory, trackers, hub."""
    import os

    from gspo_cli.config import trackers
    from gspo_cli.data import hub_check
    from gspo_cli.engines.native.inputs import run_path

    model_check, cfg = _model_config(req.preset.model.path, req.preset, req.preset_ref)
    tracked = trackers.check(req.preset, run_path(req), os.environ, trackers.missing_here(req.preset))
    return [_data_check(req), model_check, _memory_check(req.preset, cfg), tracked,
            *hub_check.checks(req.preset, model=False)]  # the model row is _model_config's


def dry_run(req: TrainRequest) -> int:
    """Verdict and its reasons first, then the details; exit 2 on errors. Nothing is created."""
    from gspo_cli.config import trust
    from gspo_cli.console import print_json
    from gspo_cli.engines.native.inputs import run_path

    t0 = time.perf_counter()
    found = checks(req)
    run_dir = run_path(req)
    ok = not any(c.status == ERROR for c in found)
    seconds = time.perf_counter() - t0
    if req.json_out:
        print_json({"ok": ok, "engine": "native", "run": run_dir.name, "run_dir": str(run_dir),
                    "run_exists": run_dir.is_dir(), "preflight": {"ok": ok, "checks": [c.to_dict() for c in found]},
                    "trust_remote_code": trust.field(req.trust_remote_code), "timings_s": {"preflight": round(seconds, 3)}})
        return 0 if ok else 2
    _render(req, found, run_dir, seconds)
    return 0 if ok else 2


def _render(req, found: list[Check], run_dir: Path, seconds: float) -> None:
    from rich.markup import escape

    from gspo_cli import layout
    from gspo_cli.console import out
    from gspo_cli.engines import schedule
    from gspo_cli.engines.verdict import print_head, print_rest

    print_head(found, title=f"native preflight, {seconds:.2f} s")
    steps = layout.list_steps(run_dir)
    state = (f"exists; resumes from step {steps[-1]}" if steps else "exists, no checkpoint yet") \
        if run_dir.is_dir() else "not created by a dry run"
    out.print(f"\nRun [bold]{escape(run_dir.name)}[/]: {escape(str(run_dir))} ({state})", highlight=False, soft_wrap=False)
    t = req.preset.trainer
    total = t.total_training_steps
    when = schedule.describe(total, t.save_freq, t.test_freq, t.val_before_train) if total else \
        f"checkpoint every {t.save_freq} steps and on the last step"
    out.print(f"Preset {escape(req.preset.name)}, engine native on {t.device}, {total or '?'} steps: {when}",
              highlight=False, soft_wrap=False)
    print_rest(found)
    out.print("Dry run: nothing launched, nothing written.")

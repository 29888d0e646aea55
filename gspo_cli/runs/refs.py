"""What `--model` (eval) and a RUN argument (report, runs, export) accept, resolved in the CLI process.

`--model` takes what users paste:

    latest                      the newest run's newest complete checkpoint
    RUN | RUN:STEP              a run under $GSPO_HOME/runs (its newest checkpoint, or that step)
    RUN:all | RUN:20,40,60      several checkpoints of a run (eval only: one job evaluates them all)
    /path/to/runs/RUN[:STEP]    a run folder
    .../global_step_N           a checkpoint folder: native (an HF folder) or verl (actor/ shards)
    /path/to/hf-folder          any HF model folder (config.json, tokenizer, weights)
    Qwen/Qwen3-0.6B             a hub id (transformers downloads it where the hub is reachable)
    builtin:tiny                the built-in tiny model (builtin:tiny-qwen3-vllm: the one vLLM-CPU serves)

Only cheap checks (folder listings, no torch or transformers), so a wrong reference fails in one line before a
job starts, naming what was found and what is accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli import layout
from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

ACCEPTED = ("an HF model folder, a hub id (org/name), a run name, RUN:STEP, RUN:all, `latest`, a run folder, "
            "or a checkpoint folder (global_step_N)")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model")
WEIGHT_GLOBS = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json", "pytorch_model.bin.index.json")


@dataclass
class ModelRef:
    path: Path  # the model folder (HF folder, or a verl checkpoint step folder); a hub id or builtin:NAME as given
    run: Path | None  # the run it belongs to, if any
    step: int | None
    kind: str = "hf"  # hf | verl | hub | builtin


# ------------------------------------------------------------------ runs


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and any((path / m).exists() for m in ("checkpoints", "metrics.jsonl", "config.yaml"))


def run_names(preset: Preset | None = None) -> list[str]:
    root = layout.runs_dir(preset)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def resolve_run(ref: str, preset: Preset | None = None) -> Path:
    """A run folder from `latest`, a run name, or a path inside the runs dir (the rule in `runs/names.py`)."""
    from gspo_cli.runs import names

    if ref == "latest":
        return layout.latest_run(preset)
    return names.existing_run(ref, preset)


def _runs_hint(preset: Preset | None = None) -> str:
    names = run_names(preset)
    shown = ", ".join(names[-5:]) + (" ..." if len(names) > 5 else "")
    return f"runs here: {shown} (gspo runs list)" if names else "no runs yet: gspo train --preset tiny"


# ------------------------------------------------------------------ checkpoints and model folders


def _step_of(path: Path) -> int | None:
    m = layout.STEP_DIR.match(path.name)
    return int(m.group(1)) if m else None


def natural_key(name: str) -> list:
    """Sort key that orders numbers by value: global_step_50 before global_step_100 (text order puts 100 first)."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part]


def describe_folder(path: Path) -> str:
    """A few names of what a folder holds, for an error message (numbers in order: global_step_50 before _100)."""
    try:
        names = sorted((p.name + ("/" if p.is_dir() else "") for p in path.iterdir()), key=natural_key)
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if not names:
        return "an empty folder"
    return ", ".join(names[:8]) + (f" (+{len(names) - 8} more)" if len(names) > 8 else "")


def check_hf_folder(path: Path, ref: str) -> None:
    """config.json, a tokenizer and weights: what transformers needs to load a causal LM from a folder."""
    missing = []
    if not (path / "config.json").is_file():
        missing.append("config.json")
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        missing.append("tokenizer files")
    if not any(next(path.glob(g), None) for g in WEIGHT_GLOBS):
        missing.append("weights (*.safetensors / pytorch_model*.bin)")
    if missing:
        raise ConfigError(f"--model {ref!r}: {path} is not a loadable model folder (no {', '.join(missing)}; "
                          f"found: {describe_folder(path)})", f"pass {ACCEPTED}")


def checkpoint_ref(path: Path, ref: str) -> ModelRef:
    """A global_step_N folder (native: an HF folder; verl: actor/ shards) or a plain HF folder."""
    from gspo_cli.models.verl_checkpoint import is_verl_checkpoint  # light: paths only

    step = _step_of(path)
    run = path.parent.parent if step is not None and path.parent.name == "checkpoints" else None
    if is_verl_checkpoint(path):
        return ModelRef(path, run, step, kind="verl")
    check_hf_folder(path, ref)
    return ModelRef(path, run, step)


def _run_steps(run: Path, ref: str) -> list[int]:
    steps = layout.list_steps(run)
    if not steps:
        partial = sorted((p.name for p in layout.checkpoints_dir(run).glob("*global_step_*")), key=natural_key) \
            if layout.checkpoints_dir(run).is_dir() else []
        found = f" (only partial saves: {', '.join(partial)})" if partial else ""
        raise ConfigError(f"--model {ref!r}: run {run.name} has no complete checkpoint{found}",
                          "train longer or set trainer.save_freq (gspo runs show RUN lists its checkpoints)")
    return steps


def pick_steps(run: Path, spec: str, ref: str) -> list[int]:
    """Steps of a run named by `spec`: '' (newest), 'all', 'N' or 'N,M,...' (each a complete checkpoint)."""
    steps = _run_steps(run, ref)
    if not spec:
        return [steps[-1]]
    if spec == "all":
        return steps
    wanted = []
    for part in spec.split(","):
        part = part.strip()
        if not part.isdigit():
            raise ConfigError(f"--model {ref!r}: {part!r} is not a step", "use RUN:STEP, RUN:20,40,60 or RUN:all")
        if int(part) not in steps:
            raise ConfigError(f"run {run.name} has no checkpoint at step {part!r}",
                              f"available steps: {', '.join(map(str, steps))}")
        wanted.append(int(part))
    return sorted(set(wanted))


def _split_ref(ref: str) -> tuple[str, str]:
    """(run part, step spec): the step spec follows the last ':' unless the whole reference is a path."""
    if Path(ref).expanduser().exists() or ":" not in ref:
        return ref, ""
    head, _, tail = ref.rpartition(":")
    return head, tail


def _is_run_name(text: str) -> bool:
    from gspo_cli.runs import names

    try:
        names.check_name(text)
    except ConfigError:
        return False
    return True


def resolve_models(ref: str, preset: Preset | None = None) -> list[ModelRef]:
    """Every model a `--model` reference names (several for RUN:all and step lists), checked cheaply."""
    ref = ref.strip()
    if ref.startswith("builtin:"):
        from gspo_cli.models.loading import builtin_name

        try:
            builtin_name(ref)
        except ConfigError as exc:
            raise ConfigError(f"--model {ref!r}: {exc.message}", exc.hint) from None
        return [ModelRef(Path(ref), None, None, kind="builtin")]
    head, spec = _split_ref(ref)
    path = Path(head).expanduser()
    if path.is_dir() and not spec and not is_run_folder(path):
        return [checkpoint_ref(path, ref)]
    if path.exists() and not path.is_dir():
        raise ConfigError(f"--model {ref!r} is a file, not a folder", f"pass {ACCEPTED}")
    if path.is_dir():
        run = path
    elif head == "latest":
        run = layout.latest_run(preset)
    elif _is_run_name(head) and layout.run_dir(head, preset).is_dir():
        run = layout.run_dir(head, preset)
    elif not spec and HUB_ID.match(head) and not head.startswith((".", "~")):
        return [ModelRef(Path(head), None, None, kind="hub")]
    else:
        raise ConfigError(f"--model {ref!r}: no such folder, run or hub id (runs in {layout.runs_dir(preset)})",
                          f"pass {ACCEPTED}; {_runs_hint(preset)}")
    return [checkpoint_ref(layout.checkpoints_dir(run) / f"global_step_{s}", ref) for s in pick_steps(run, spec, ref)]


def resolve_model(ref: str, preset: Preset | None = None) -> ModelRef:
    """Exactly one model; `RUN:all` and step lists are refused (they are for `gspo eval`)."""
    found = resolve_models(ref, preset)
    if len(found) != 1:
        raise ConfigError(f"--model {ref!r} names {len(found)} checkpoints; this command takes one",
                          "name one step: RUN:STEP")
    return found[0]


def export_step(run: str, step: int | None) -> tuple[Path, int | None]:
    """(global_step folder, step) for `gspo export RUN [--step N]`."""
    ref = f"{run}:{step}" if step is not None else run
    name = run.partition(":")[0]
    if not Path(run).expanduser().is_dir() and name != "latest" and not layout.run_dir(name).is_dir():
        # resolve_model's own message speaks of eval's --model flag
        raise ConfigError(f"gspo export {run!r}: no such run or folder (looked in {layout.runs_dir()})",
                          "pass a run name (ls $GSPO_HOME/runs), `latest`, RUN:STEP or a global_step_N folder")
    # the newest step verl finished saving (its tracker file), not a folder left by a save killed midway
    model = resolve_model(ref)
    return model.path, model.step

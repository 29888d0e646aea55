"""Where every gspo file lives under `$GSPO_HOME` (default `~/.gspo`; on a cluster, storage all nodes share).

```
presets/<name>.yaml                                  user presets (found by name)
data/<source>/<key>/{train,val}.parquet, manifest.json  prepared datasets, one folder per data key (data/manifest.py;
                                                     `paths.data_dir` overrides the root); data/<source>/raw/: downloads
runs/<run>/config.yaml, metrics.jsonl                a run (`paths.runs_dir` overrides the root)
runs/<run>/checkpoints/global_step_<N>/              verl layout, or HF save_pretrained for the native engine
runs/<run>/eval/<benchmark>-<step>-<digest>/         eval results (the digest names settings and data)
models/hub/<hub>/<org>/<name>/<revision>/            a hub model fetched by `gspo prepare-model` (models/hub_model.py)
ray/                                                 the embedded head's record, log and temp dir
jobs/<command>-<time>-<id>.json                      the request of a job that has no run folder (prepare-data, export)
```

A source used as the preset's `data.train` is written as `train.parquet`, as `data.val` as `val.parquet`
(arith, used for both, writes both). Eval benchmarks read the `val` split of their source.

Model references on the command line (`--model latest`, `RUN:STEP`, ...) are resolved in `gspo_cli.runs.refs`.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from gspo_cli.errors import ConfigError


def name_problem(name: str | None) -> str | None:
    """Why `name` cannot be one folder or file name that gspo makes under one of its folders (None: it can).

    The one rule for every user-supplied name that becomes part of a path (run names: runs/names.py; eval
    benchmark names: eval/request.py): no path separator, no `..`, not starting with `.` (gspo's temp folders do)
    or `~`, no control character."""
    if not name or not name.strip():
        return "it is empty"
    if "/" in name or os.sep in name or (os.altsep and os.altsep in name) or "\\" in name:
        return "it contains a path separator"
    if ".." in name:
        return "it contains '..'"
    if name.startswith((".", "~")):
        return f"it starts with {name[0]!r}"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "it contains a control character"
    return None


def path_component(name: str | None, what: str, hint: str) -> str:
    """`name` when it passes `name_problem`; else ConfigError `bad WHAT 'name': why`."""
    problem = name_problem(name)
    if problem is not None or name is None:
        raise ConfigError(f"bad {what} {name!r}: {problem or 'it is empty'}", hint)
    return name


def gspo_home() -> Path:
    return Path(os.environ.get("GSPO_HOME") or Path.home() / ".gspo").expanduser()


def user_presets_dir() -> Path:
    return gspo_home() / "presets"


def baselines_dir() -> Path:
    """Acceptance baselines recorded on this cluster (`gspo accept --record`): <preset>.json."""
    return gspo_home() / "baselines"


def ray_dir() -> Path:
    return gspo_home() / "ray"


def job_request_file(command: str) -> Path:
    """A new file for the request of a job with no folder of its own (training writes its run folder's)."""
    import secrets

    return gspo_home() / "jobs" / f"{command}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}.json"


def builtin_presets_dir() -> Path:
    """Built-in presets: `presets/` at the repository root (a source checkout, or an editable install), shipped in
    a wheel as the data package `gspo_cli.builtin_presets` (setup.py maps it to that folder)."""
    source_tree = Path(__file__).resolve().parent.parent / "presets"
    if source_tree.is_dir():
        return source_tree
    from importlib.resources import files

    return Path(str(files("gspo_cli.builtin_presets")))


# ---- prepared data -------------------------------------------------------------------------------------------

def data_dir(preset=None) -> Path:
    if preset is not None and preset.paths.data_dir:
        return Path(preset.paths.data_dir).expanduser()
    return gspo_home() / "data"


def source_root(source: str, preset=None) -> Path:
    """`<data_dir>/<source>/`: the source's prepared sets (one folder per data key) and its raw-input cache."""
    return data_dir(preset) / source


def hub_model_dir(hub: str, repo: str, revision: str) -> Path:
    """`$GSPO_HOME/models/hub/<hub>/<org>/<name>/<revision>/`: one pinned hub model (`repo` and `revision` are
    checked as path components by models/hub_model.py and config/hub.py)."""
    return gspo_home() / "models" / "hub" / hub / repo / revision


# ---- runs and checkpoints -------------------------------------------------------------------------------------

STEP_DIR = re.compile(r"^global_step_(\d+)$")


def runs_dir(preset=None) -> Path:
    if preset is not None and preset.paths.runs_dir:
        return Path(preset.paths.runs_dir).expanduser()
    return gspo_home() / "runs"


def new_run_name(preset_name: str) -> str:
    return f"{preset_name}-{time.strftime('%Y%m%d-%H%M%S')}"


def run_dir(name: str, preset=None) -> Path:
    return runs_dir(preset) / name


def checkpoints_dir(run: Path) -> Path:
    return run / "checkpoints"


def metrics_file(run: Path) -> Path:
    return run / "metrics.jsonl"


# verl writes this after a checkpoint save completes (ray_trainer._save_checkpoint); the native engine never does.
VERL_TRACKER = "latest_checkpointed_iteration.txt"


def list_steps(run: Path) -> list[int]:
    """Steps with a complete checkpoint.

    Temp folders of an interrupted native save start with '.' and are ignored. verl creates `global_step_N/`
    before saving and writes its tracker file only after, so with a tracker, steps after it are incomplete;
    without one (a native run, or no verl save finished yet) every folder counts.
    """
    ckpt = checkpoints_dir(run)
    if not ckpt.is_dir():
        return []
    steps = sorted(int(m.group(1)) for p in ckpt.iterdir() if p.is_dir() and (m := STEP_DIR.match(p.name)))
    try:
        latest = int((ckpt / VERL_TRACKER).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return steps
    return [s for s in steps if s <= latest]


def last_activity(run: Path) -> float:
    """When training last wrote to the run (metrics, config, checkpoints); eval/ and report/ folders don't count."""
    marks = [run / "metrics.jsonl", run / "config.yaml", checkpoints_dir(run)]
    times = [p.stat().st_mtime for p in marks if p.exists()]
    return max(times) if times else run.stat().st_mtime


def latest_run(preset=None) -> Path:
    root = runs_dir(preset)
    runs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")] if root.is_dir() else []
    if not runs:
        raise ConfigError(f"no runs in {root}", "train one first: gspo train --preset tiny")
    return max(runs, key=last_activity)

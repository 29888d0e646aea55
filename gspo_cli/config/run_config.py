"""A run folder's saved preset (runs/<run>/config.yaml) is data: it may come from someone else (docs/security.md,
"Run folders").

Loaded as a preset (`gspo train --resume`, `--preset runs/RUN/config.yaml`, `gspo eval`'s default preset of a
run's checkpoints, and the eval job that reads the same file), it never decides that code runs:

- `model.trust_remote_code` is not taken from it (the model folder's `auto_map` would run its own Python); the
  user's own `--set model.trust_remote_code=true` (or eval's `--trust-remote-code`) turns it on, visibly;
- an `overrides.verl` entry that makes verl import or build code (a custom reward function, an external library,
  a custom dataset class, a checkpoint-engine module, `_target_`, trust_remote_code) is refused with one line.

Environment variables a saved config names go through the one env rule of every door (env/var_checks.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gspo_cli.errors import ConfigError

# what gspo itself leaves in a run folder next to config.yaml (runs/names.py MARKERS, metrics, checkpoints, the
# native job's config.json, the verl job file)
RUN_FILES = ("job_state.json", "metrics.jsonl", "checkpoints", "config.json", "verl_job.json")
# key segments of a verl override that load or build code (verl 0.9.1 _generated_ppo_trainer.yaml)
CODE_SEGMENTS = ("trust_remote_code", "external_lib", "custom_cls", "custom_reward_function", "_target_", "module",
                 "custom_backend_module")
TRUST_HINT = ("if you trust that model's code: --set model.trust_remote_code=true (gspo eval: --trust-remote-code); "
              "docs/security.md")


def is_run_config(path: Path) -> bool:
    """Whether a preset file is a run folder's saved config (config.yaml beside a run's own files)."""
    return path.name == "config.yaml" and any((path.parent / f).exists() for f in RUN_FILES)


def _override_key(entry: str) -> str:
    return entry.split("=", 1)[0].lstrip("+~")


def loads_code(entry: Any) -> bool:
    """Whether a verl override entry names a key that makes verl import or build code."""
    segments = _override_key(str(entry)).split(".")
    return any(s in CODE_SEGMENTS or s.endswith("_module") for s in segments)


def as_data(data: dict[str, Any], file: str) -> tuple[dict[str, Any], list[str]]:
    """(the saved preset without what would run code, the notes to print); ConfigError for a code override."""
    notes = []
    model = data.get("model")
    if isinstance(model, dict) and model.get("trust_remote_code") not in (None, False):
        data = {**data, "model": {**model, "trust_remote_code": False}}
        notes.append(f"{file} sets model.trust_remote_code: {model.get('trust_remote_code')!r}; not taken from a "
                     f"run folder (its model's own Python would run). {TRUST_HINT}")
    overrides = data.get("overrides")
    entries = overrides.get("verl") if isinstance(overrides, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if loads_code(entry):
            raise ConfigError(f"{file}: overrides.verl entry {_override_key(str(entry))!r} makes verl load code; a "
                              "run folder's saved config never does",
                              "start from your own preset: gspo train --preset NAME --run-name RUN (it continues "
                              "the run from its checkpoint) with the entry in that preset")
    return data, notes

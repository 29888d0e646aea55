"""`model.trust_remote_code` on: where it was turned on and the one line that says so (docs/security.md).

It comes only from the user's own preset (its file and line) or `--set` (a run folder's saved config never turns
it on: config/run_config.py). `gspo train` says it for both engines, run or dry-run (stderr, so `--json` keeps
its stdout), and the dry-run's `--json` carries it as `trust_remote_code`; a run folder's config loaded with the
user's `--set` notes the same line (config/presets.py).
"""

from __future__ import annotations

from typing import Any

# `loaded` below is config/presets.py's LoadedPreset, typed Any: presets.py imports this module, and even a
# TYPE_CHECKING import back would make an import circle (tests/test_import_layers.py).
KEY = ("model", "trust_remote_code")


def source(loaded: Any) -> str | None:
    """Where it was turned on: `--set ...`, or `preset NAME, FILE:LINE model.trust_remote_code`; None when off."""
    from gspo_cli.untrusted import clean

    if not loaded.preset.model.trust_remote_code:
        return None
    origin = loaded.origin(KEY) or str(loaded.source.path)
    where = origin if origin.startswith("--set ") else f"preset {loaded.preset.name}, {origin} model.trust_remote_code"
    return clean(where)


def line(where: str) -> str:
    return f"trust_remote_code: on ({where}): the model folder's own Python code will run"


def field(where: str | None) -> dict[str, Any]:
    """The `--json` field: {"on": bool, "from": where or null, "line": the text line or null}."""
    return {"on": where is not None, "from": where, "line": line(where) if where else None}


def say(loaded: Any) -> str | None:
    """Print the line on stderr when it is on (once: a run folder's config already noted it) and return where."""
    where = source(loaded)
    if where and line(where) not in loaded.notes:
        from gspo_cli.console import err

        err.print(line(where), highlight=False, markup=False, soft_wrap=True)
    return where

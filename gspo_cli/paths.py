"""Where gspo keeps its files. `$GSPO_HOME` (default `~/.gspo`) must be shared storage on a cluster."""

from __future__ import annotations

import os
from pathlib import Path


def gspo_home() -> Path:
    return Path(os.environ.get("GSPO_HOME") or Path.home() / ".gspo").expanduser()


def data_dir() -> Path:
    return gspo_home() / "data"


def runs_dir() -> Path:
    return gspo_home() / "runs"


def user_presets_dir() -> Path:
    return gspo_home() / "presets"


def ray_dir() -> Path:
    return gspo_home() / "ray"


def builtin_presets_dir() -> Path:
    """Built-in presets ship inside the package (`gspo_cli/presets/`) so a wheel install finds them."""
    return Path(__file__).resolve().parent / "presets"

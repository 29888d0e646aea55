"""The one run-name rule: what names a run folder, for both engines, `gspo runs`, `eval` and `report`.

- A run NAME is one plain folder name under the runs dir (`$GSPO_HOME/runs`, or the preset's `paths.runs_dir`):
  no path separator, no `..`, not starting with `.` (gspo's own temp folders do), no NUL. `run_dir_for` is the
  only way a command turns a name into a folder it will create or write.
- An existing run named by a PATH (`runs show ./x`, `report /abs/runs/x`) is accepted only when it resolves
  (symlinks followed) inside the runs dir and holds a run's marker: `config.yaml` written by gspo (a mapping
  with `trainer` settings) or `job_state.json`. Anything else is one clear error, so `gspo runs rm` can never
  remove a folder that is not a run (`..`, `/etc`, a symlink pointing out of runs/, an unrelated folder).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli import layout
from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

NAME_HINT = "a run name is a plain folder name under $GSPO_HOME/runs, e.g. tiny-try2 (gspo runs list)"
MARKERS = ("config.yaml", "job_state.json")


def check_name(name: str | None) -> str:
    """`name` if it is a valid run name; else a ConfigError naming what is wrong (layout.path_component: the one
    rule for names that become paths)."""
    return layout.path_component(name, "run name", NAME_HINT)


def run_dir_for(name: str | None, preset: Preset | None = None) -> Path:
    """The folder of run `name` under the runs dir (checked; not created)."""
    root = layout.runs_dir(preset)
    path = root / check_name(name)
    if path.is_symlink() and not _inside(path, root):
        raise ConfigError(f"run folder {path} is a symlink pointing outside {root}",
                          "remove that link, or pick another --run-name")
    return path


def is_run(path: Path) -> bool:
    """Whether `path` holds a run's marker (see the module docstring)."""
    if (path / "job_state.json").is_file():
        return True
    config = path / "config.yaml"
    if not config.is_file():
        return False
    import yaml

    from gspo_cli import untrusted
    from gspo_cli.config import yaml_limits

    try:
        data = yaml_limits.load(untrusted.read_text(config), str(config))
    except (OSError, ValueError, yaml.YAMLError, ConfigError):
        return False
    return isinstance(data, dict) and isinstance(data.get("trainer"), dict)


def _inside(path: Path, root: Path) -> bool:
    real, real_root = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return real != real_root and real_root in real.parents


def looks_like_path(ref: str) -> bool:
    return "/" in ref or os.sep in ref or ref in (".", "..") or ref.startswith("~")


def existing_run(ref: str, preset: Preset | None = None) -> Path:
    """An existing run named by `ref` (a run name, or a path inside the runs dir), its real folder.

    Never returns a folder outside the runs dir or one without a run's marker.
    """
    root = layout.runs_dir(preset)
    if looks_like_path(ref):
        path = Path(ref).expanduser()
        shown = f"{ref!r}" + (f" ({os.path.realpath(path)})" if os.path.realpath(path) != ref else "")
        if not path.is_dir():
            raise ConfigError(f"no run folder {shown}", _hint(preset))
    else:
        path = root / check_name(ref)
        shown = repr(ref)
        if not path.is_dir() and not path.is_symlink():
            raise ConfigError(f"no run {ref!r} in {root}", _hint(preset))
    if not _inside(path, root):
        raise ConfigError(f"{shown} is not a run: it is outside the runs folder {root}",
                          "gspo acts only on runs under $GSPO_HOME/runs (or the preset's paths.runs_dir); "
                          + _hint(preset))
    real = Path(os.path.realpath(path))
    if not real.is_dir() or not is_run(real):
        raise ConfigError(f"{shown} is not a run: no config.yaml written by gspo and no job_state.json in it",
                          _hint(preset))
    return real


def _hint(preset: Preset | None = None) -> str:
    root = layout.runs_dir(preset)
    names = sorted(p.name for p in root.iterdir() if not p.name.startswith(".") and not p.is_symlink()
                   and p.is_dir() and is_run(p)) if root.is_dir() else []
    shown = ", ".join(names[-5:]) + (" ..." if len(names) > 5 else "")
    return f"runs here: {shown} (gspo runs list)" if names else "no runs yet: gspo train --preset tiny"

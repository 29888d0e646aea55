"""What `gspo runs` does between its options and its output (runs/view.py): the runs folder a --preset names, and
`rm`'s refusals and question before a run folder goes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


def preset_of(name: str | None) -> Preset | None:
    """The preset whose paths.runs_dir to look in (--preset), else None: $GSPO_HOME/runs."""
    if not name:
        return None
    from gspo_cli.config.presets import load_preset

    return load_preset(name)


def resolve(run: str, preset: str | None) -> Path:
    from gspo_cli.runs.refs import resolve_run

    return resolve_run(run, preset_of(preset))


def resolve_all(runs: list[str] | None, preset: str | None) -> list[Path]:
    """The run folders RUN arguments name (none: `latest`), looked for in --preset's runs_dir."""
    from gspo_cli.runs.refs import resolve_run

    loaded = preset_of(preset)
    return [resolve_run(r, loaded) for r in (runs or ["latest"])]


def remove(run: str, preset: str | None, confirm: Callable[[Path, dict[str, Any]], object] | None) -> Path:
    """Delete a run folder, refused for `latest` and while its job runs; `confirm(path, info)` (None: --yes) asks
    first and aborts by raising."""
    from gspo_cli.runs import catalog

    if run == "latest":
        raise ConfigError("gspo runs rm takes a run name, not `latest`", "name the run: gspo runs list")
    path = resolve(run, preset)
    info = catalog.run_info(path)
    if info["status"] == "running":
        catalog.remove(path)  # raises the one-line refusal
    if confirm is not None:
        confirm(path, info)
    catalog.remove(path)
    return path

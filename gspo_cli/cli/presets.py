"""`gspo presets list | show | copy`: browse the built-in presets and fork one to edit."""

from __future__ import annotations

from pathlib import Path

import typer

from gspo_cli.cli import options

app = typer.Typer(help="List, show and copy presets (model x cluster shape x recipe).", no_args_is_help=True)


@app.command("list")
def list_presets(json_out: bool = options.json_out()) -> None:
    """List the built-in presets and those in $GSPO_HOME/presets."""
    from gspo_cli.config import catalog as preset_catalog
    from gspo_cli.config import view
    from gspo_cli.console import emit

    rows = preset_catalog.catalog()
    emit(json_out, rows, view.render_list, rows)


@app.command("show")
def show(
    name: str = typer.Argument(..., help="Preset name, alias or path to a YAML file."),
    resolved: bool = typer.Option(False, "--resolved", help="Show every value after extends, defaults and --set."),
    json_out: bool = options.json_out(),
    sets: list[str] | None = options.sets("actor.lr=2e-6"),
) -> None:
    """Show a preset: the file as written, or --resolved with every default filled in."""
    from gspo_cli.config import presets, view
    from gspo_cli.console import emit
    from gspo_cli.engines.verl.traps import checks
    from gspo_cli.jobs.secret_env import redact_preset  # the one rule: secret env.vars never printed

    loaded = presets.load(name, sets or [])
    data = redact_preset(view.shown_data(loaded, resolved))
    emit(json_out, data, view.render_show, loaded, data, resolved, checks)


@app.command("copy")
def copy(
    name: str = typer.Argument(..., help="Preset to fork (name, alias or path)."),
    dest: Path = typer.Argument(..., help="New YAML file, or a bare name to write $GSPO_HOME/presets/NAME.yaml."),
    force: bool = options.force("Overwrite DEST if it exists."),
) -> None:
    """Fork a preset into an editable file; it `extends` nothing, so every value is there to change."""
    from gspo_cli.config import catalog as preset_catalog
    from gspo_cli.config import view

    view.render_copied(preset_catalog.copy_preset(name, dest, force=force))

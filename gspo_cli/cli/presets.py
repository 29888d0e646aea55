"""`gspo presets list | show | copy`: browse the built-in presets and fork one to edit."""

from __future__ import annotations

from pathlib import Path

import typer

from gspo_cli.cli import options
from gspo_cli.shell import quote

app = typer.Typer(help="List, show and copy presets (model x cluster shape x recipe).", no_args_is_help=True)


@app.command("list")
def list_presets(json_out: bool = options.json_out()) -> None:
    """List the built-in presets and those in $GSPO_HOME/presets."""
    from gspo_cli.config import catalog as preset_catalog

    rows = preset_catalog.catalog()
    if json_out:
        from gspo_cli.console import print_json

        print_json(rows)
        return
    from rich.table import Table

    from gspo_cli.console import out

    table = Table(title="gspo presets", title_justify="left", pad_edge=False)
    if out.width >= 120:
        table.add_column("name", no_wrap=True)
        for col in ("aliases", "model", "cluster", "engine"):
            table.add_column(col, overflow="fold")
        table.add_column("description", min_width=24, ratio=1)
        for row in rows:
            table.add_row(row["name"], ", ".join(row["aliases"]), row["model"], row["cluster"], row["engine"],
                          row["description"])
    else:  # 80 columns: aliases under the name, model/cluster/engine stacked, so no column is cut to "mo…"
        table.add_column("name (aliases)", no_wrap=True)
        table.add_column("model, cluster, engine", no_wrap=True)
        table.add_column("description", ratio=1)
        for row in rows:
            aliases = f"\n[dim]{', '.join(row['aliases'])}[/]" if row["aliases"] else ""
            table.add_row(row["name"] + aliases, f"{row['model'].rsplit('/', 1)[-1]}\n{row['cluster']}, {row['engine']}",
                          row["description"])
    out.print(table)


@app.command("show")
def show(
    name: str = typer.Argument(..., help="Preset name, alias or path to a YAML file."),
    resolved: bool = typer.Option(False, "--resolved", help="Show every value after extends, defaults and --set."),
    json_out: bool = options.json_out(),
    sets: list[str] | None = options.sets("actor.lr=2e-6"),
) -> None:
    """Show a preset: the file as written, or --resolved with every default filled in."""
    from gspo_cli.config import presets

    loaded = presets.load(name, sets or [])
    if resolved or json_out:
        import copy

        from gspo_cli.jobs.secret_env import redact_preset  # the one rule: secret env.vars never printed

        data = redact_preset(loaded.preset.model_dump(mode="json") if resolved else copy.deepcopy(loaded.source.data))
        if json_out:
            from gspo_cli.console import print_json

            print_json(data)
            return
        import yaml

        text = yaml.safe_dump(data, sort_keys=False)
    else:
        text = loaded.source.path.read_text(encoding="utf-8")
    from rich.syntax import Syntax

    from gspo_cli.console import err, out

    err.print(f"[dim]{loaded.source.path}[/]")
    out.print(Syntax(text, "yaml", background_color="default"))
    _print_traps(loaded.preset)


def _print_traps(preset) -> None:
    """The preset's configuration traps (errors and warnings only): what `gspo train` would refuse or warn about."""
    from rich.markup import escape

    from gspo_cli.console import err, styled
    from gspo_cli.engines.verl.traps import checks

    for c in checks(preset):
        if c.status in ("error", "warn"):
            err.print(f"{styled(c.status)} {escape(c.name)}: {escape(c.message)}"
                      + (f"\n  fix: {escape(c.fix)}" if c.fix else ""))


@app.command("copy")
def copy(
    name: str = typer.Argument(..., help="Preset to fork (name, alias or path)."),
    dest: Path = typer.Argument(..., help="New YAML file, or a bare name to write $GSPO_HOME/presets/NAME.yaml."),
    force: bool = options.force("Overwrite DEST if it exists."),
) -> None:
    """Fork a preset into an editable file; it `extends` nothing, so every value is there to change."""
    from gspo_cli.config import catalog as preset_catalog
    from gspo_cli.console import err

    written = preset_catalog.copy_preset(name, dest, force=force)
    from gspo_cli import layout

    # a preset in $GSPO_HOME/presets is found by its name; one elsewhere by its path
    in_home = written.parent.resolve() == layout.user_presets_dir().resolve()
    ref = written.stem if in_home else str(written)
    err.print(f"Wrote {written}. Edit it, then: gspo train --preset {quote(ref)} --dry-run", highlight=False,
              markup=False)

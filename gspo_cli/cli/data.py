"""`gspo prepare-data`: clean the preset's datasets into verl's schema, with a manifest that proves it."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def prepare_data_command(
    preset: str = options.preset(required=True, help="Preset whose data section to prepare, e.g. tiny."),
    dataset: list[str] | None = typer.Option(
        None, "--dataset", "-d", help="Prepare only this source (repeatable): dapo-math-17k, aime-2024, arith."
    ),
    input_: list[str] | None = typer.Option(
        None, "--input", "-i", metavar="NAME=PATH", help="Raw file for a source instead of the hub (repeatable)."
    ),
    out: str = typer.Option(None, "--out", help="Data folder (default: the preset's paths.data_dir or $GSPO_HOME/data)."),
    force: bool = options.force("Rebuild even when input and settings are unchanged."),
    sets: list[str] | None = options.sets("data.language=en"),
    local: bool = options.local(),
    address: str = options.address(),
    json_out: bool = options.json_out("Print the manifests as JSON to stdout."),
) -> None:
    """Deduplicate and convert the preset's datasets (DAPO-Math-17k, AIME-2024, arith) to verl parquet + manifest."""
    from pathlib import Path

    from gspo_cli.config.presets import load_preset
    from gspo_cli.data import job, prepare
    from gspo_cli.jobs import client as jobs

    sets = list(sets or [])
    loaded = load_preset(preset, sets)  # fail fast on a bad preset, --set, --dataset or --input
    inputs = prepare.parse_inputs(list(input_ or []))
    items = prepare.plan(loaded, list(dataset or []) or None)
    prepare.check_inputs(items, inputs)
    # Paths travel to the job as absolute paths (a Ray job runs in another working directory).
    abs_inputs = [f"{name}={Path(path).expanduser().resolve()}" for name, path in inputs.items()]
    out_dir = str(Path(out).expanduser().resolve()) if out else None
    preset_arg = str(Path(preset).resolve()) if Path(preset).suffix in (".yaml", ".yml") else preset
    argv = job.to_argv(preset=preset_arg, sets=sets, datasets=list(dataset or []), inputs=abs_inputs, out=out_dir,
                       force=force)
    code = jobs.run_job("prepare-data", argv, preset=loaded, address=address, local=local, json_out=json_out)
    if code != 0:
        raise typer.Exit(code)
    if not json_out:
        render(loaded, items, out_dir)


def render(preset, items, out_dir: str | None) -> None:
    from pathlib import Path

    from rich.table import Table

    from gspo_cli import layout
    from gspo_cli.console import out
    from gspo_cli.data import manifest

    data_dir = Path(out_dir) if out_dir else layout.data_dir(preset)
    table = Table(title=f"prepared data in {data_dir}/<source>/<split>.parquet", title_justify="left")
    for col, just in (("source", "left"), ("split", "left"), ("rows in", "right"), ("duplicates", "right"),
                      ("conflicts", "right"), ("rejected", "right"), ("rows out", "right")):
        table.add_column(col, justify=just)
    for item in items:
        m = manifest.read(item.source, data_dir=data_dir)
        if m is None:
            continue
        conf = m.get("conflicts") or {}
        rej = (m.get("rejected") or {}).get("rows", 0)
        for split, o in m.get("outputs", {}).items():
            table.add_row(
                item.source, split, f"{m.get('rows_in') or '-'}", f"{m.get('duplicates_removed', '-')}",
                f"{conf.get('problems', '-')}", f"{rej}", f"{o['rows']}",
            )
    out.print(table)

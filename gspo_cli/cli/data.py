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
    from gspo_cli.config.presets import load_preset
    from gspo_cli.data import job
    from gspo_cli.jobs import client as jobs

    sets = list(sets or [])
    loaded = load_preset(preset, sets)  # fail fast on a bad preset, --set, --dataset or --input
    req = job.request(loaded, preset_ref=preset, sets=sets, datasets=list(dataset or []), inputs=list(input_ or []),
                      out=out, force=force)
    from gspo_cli.engines import node_resources
    from gspo_cli.env.exports import job_vars

    # the embedded head, when this starts it, offers what the preset's training engine will ask of it
    spec = jobs.JobSpec(job.JOB_COMMAND, req, preset=loaded, env_vars=job_vars(loaded), node=node_resources(loaded))
    code = jobs.run_job(spec, address=address, local=local, json_out=json_out)
    if code != 0:
        raise typer.Exit(code)
    if not json_out:  # with --json the job's follower printed its result
        from gspo_cli.data import view

        view.render(*job.prepared_rows(loaded, req))

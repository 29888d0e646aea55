"""`gspo export RUN [--step N] --out DIR`: merge a verl FSDP checkpoint into a Hugging Face folder."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def export_command(
    run: str = typer.Argument(..., help="Run name, run folder, or `latest`; RUN:STEP also works."),
    out: str = typer.Option(..., "--out", "-o", help="Folder for the merged Hugging Face model (must be new/empty)."),
    step: int = typer.Option(None, "--step", help="Checkpoint step (default: the newest global_step_N)."),
    force: bool = options.force("Replace a non-empty --out folder."),
    local: bool = options.local(),
    address: str = options.address("Ray address (default: RAY_ADDRESS, local head)."),
    json_out: bool = options.json_out("Print the result as JSON on stdout."),
) -> None:
    """Merge a verl FSDP checkpoint (global_step_N/actor) into an HF model folder with verl.model_merger."""
    from gspo_cli.models.verl_checkpoint import export
    from gspo_cli.runs.refs import export_step

    # RUN:STEP is resolved (and a bad step reported) by runs.resolve_model.
    step_dir, step_n = export_step(run, step)
    code = export(step_dir, step_n, out, address=address, local=local, json_out=json_out, force=force)
    if code:
        raise typer.Exit(code)

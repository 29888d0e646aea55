"""`gspo runs list | show | rm`: the runs under $GSPO_HOME/runs, read from their files (no Ray needed)."""

from __future__ import annotations

import typer

from gspo_cli.cli import options

app = typer.Typer(help="List, inspect and remove training runs ($GSPO_HOME/runs).", no_args_is_help=True)

RUNS_DIR_HELP = "Look in this preset's paths.runs_dir instead."


@app.command("list")
def list_cmd(preset: str | None = options.preset(help=RUNS_DIR_HELP), json_out: bool = options.json_out()) -> None:
    """One row per run, newest activity first: status, steps, last reward, best validation, latest evals."""
    from gspo_cli import untrusted
    from gspo_cli.console import emit, err
    from gspo_cli.runs import catalog, flow, view

    rows = catalog.list_runs(flow.preset_of(preset))
    untrusted.print_skipped(err)  # a bad file costs its run one line, never the listing
    emit(json_out, rows, view.render_list, rows)


@app.command("show")
def show_cmd(run: str = typer.Argument(..., help="Run name, run folder, or `latest`."),
             preset: str | None = options.preset(help=RUNS_DIR_HELP), json_out: bool = options.json_out()) -> None:
    """One run: settings changed from its preset, checkpoints, evals, health, and the commands to go on."""
    from gspo_cli import untrusted
    from gspo_cli.console import emit, err
    from gspo_cli.runs import catalog, flow, view

    info = catalog.show(flow.resolve(run, preset))
    untrusted.print_skipped(err)
    emit(json_out, info, view.render_show, info)


@app.command("rm")
def rm_cmd(run: str = typer.Argument(..., help="Run name or run folder."),
           yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
           preset: str | None = options.preset(help=RUNS_DIR_HELP)) -> None:
    """Delete a run folder (checkpoints, metrics, evals); refused while its job is running."""
    from gspo_cli.console import err
    from gspo_cli.runs import flow, view

    def ask(path, info) -> None:
        typer.confirm(view.remove_question(path, info), abort=True, err=True)

    path = flow.remove(run, preset, None if yes else ask)
    err.print(f"Removed {path}", highlight=False)

"""`gspo env doctor | exports`: what is wrong on which node and how to fix it; the exports for this stack."""

from __future__ import annotations

import typer

from gspo_cli.cli import options

app = typer.Typer(help="Check the environment (CANN, driver, NPUs, Python stack, variables) and print exports.",
                  no_args_is_help=True)


def _load(preset: str | None, sets: list[str] | None):
    if not preset:
        return None
    from gspo_cli.config.presets import load_preset

    return load_preset(preset, sets or [])


@app.command("doctor")
def doctor(
    preset: str | None = options.preset(help="Judge against this preset (shape, versions)."),
    cluster: bool = typer.Option(False, "--cluster", help="Probe every alive Ray node and compare them."),
    address: str | None = options.address("Ray GCS address HEAD:PORT (with --cluster)."),
    json_out: bool = options.json_out(),
    sets: list[str] | None = options.sets("cluster.nnodes=2"),
    explain: str | None = typer.Option(None, "--explain", metavar="ID", help="Print one failure signature "
                                       "(detection, cause, fix, sources; ids in docs/failures.md) and exit."),
) -> None:
    """A table of checks (ok / warn / error / skip) with what was found and how to fix it. Exit 1 if any is an
    error."""
    from gspo_cli.console import emit
    from gspo_cli.env import view

    if explain:
        from gspo_cli import signatures

        view.render_explain(signatures.explain(signatures.get(explain)))
        return
    from gspo_cli.engines import environment
    from gspo_cli.env.doctor import diagnose

    loaded = _load(preset, sets)
    result = diagnose(loaded, cluster=cluster, address=address,
                      environment=(lambda: environment(loaded).to_json()) if loaded is not None else None)
    emit(json_out, view.doctor_data(result, loaded), view.render_doctor, result, loaded, cluster)
    raise typer.Exit(result.exit_code)


@app.command("exports")
def exports(
    preset: str = options.preset(required=True, help="Preset whose env section to export, e.g. qwen3-32b."),
    stack: str | None = typer.Option(None, "--stack", help="Judge against vllm-ascend==X instead of what is "
                                     "installed here."),
    head: str | None = typer.Option(None, "--head", help="Ray head address; the route to it picks the socket "
                                    "interfaces (default: the preset's cluster.address)."),
    fmt: str = typer.Option("sh", "--format", help="sh (source it) or json."),
    sets: list[str] | None = options.sets("cluster.nnodes=2"),
) -> None:
    """The exports for this stack: obsolete variables dropped (with their replacement), jemalloc if found."""
    from gspo_cli.console import emit
    from gspo_cli.env import view
    from gspo_cli.env.doctor import exports_here
    from gspo_cli.errors import ConfigError

    if fmt not in ("sh", "json"):
        raise ConfigError(f"--format {fmt!r}: choose sh or json")
    result = exports_here(_load(preset, sets), stack=stack, head=head)
    emit(fmt == "json", result.as_dict(), view.write_sh, result)

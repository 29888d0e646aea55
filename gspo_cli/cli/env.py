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
    if explain:
        from gspo_cli import signatures
        from gspo_cli.console import out

        out.print(signatures.explain(signatures.get(explain)), highlight=False, markup=False, soft_wrap=True)
        return
    from gspo_cli.env.doctor import diagnose

    loaded = _load(preset, sets)
    from gspo_cli.engines import environment

    result = diagnose(loaded, cluster=cluster, address=address,
                      environment=(lambda: environment(loaded).to_json()) if loaded is not None else None)
    checks, code, seconds = result.checks, result.exit_code, result.seconds
    if json_out:
        from gspo_cli.console import print_json

        print_json({"exit_code": code, "seconds": seconds, "preset": getattr(loaded, "name", None),
                    "checks": [c.to_dict() for c in checks],
                    "facts": result.facts if result.facts is not None else result.nodes})
        raise typer.Exit(code)
    from gspo_cli.checks import counts
    from gspo_cli.console import err, out

    table = doctor_table(checks, title="gspo env doctor" + (f" --preset {loaded.name}" if loaded else ""),
                         width=out.width, cluster=cluster)
    out.print(table)
    tally = counts(checks, ("ok", "warn", "error", "skip"))
    err.print(", ".join(f"{n} {s}" for s, n in tally.items()) + f" in {seconds:.1f} s")
    raise typer.Exit(code)


def _longest_word(texts) -> int:
    """The longest run without a space in `texts` (a path such as /etc/security/limits.conf)."""
    return max((len(w) for t in texts for w in str(t).split()), default=0)


def doctor_table(checks, *, title: str, width: int, cluster: bool = False):
    """The doctor's table for a terminal `width` wide: check names and statuses whole; found and fix each get at
    least their longest word while they fit (fix first), so text wraps between words ('limits.c onf' was
    /etc/security/limits.conf folded in a 22-column fix column). A word wider than what is left folds."""
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import styled

    table = Table(title=title, title_justify="left")
    fixed = max([5, *(len(c.name) for c in checks)]) + max([6, *(len(c.status) for c in checks)])
    columns = 4 + (1 if cluster else 0)
    left = width - fixed - 3 * columns - 1 - (12 if cluster else 0)  # borders and padding: 3 per column + 1
    fix_min = min(_longest_word(c.fix for c in checks), left * 2 // 3)  # commands and paths to copy: first
    found_min = min(_longest_word(c.message for c in checks), left - fix_min)
    if cluster:
        table.add_column("node", overflow="fold")
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("found", overflow="fold", min_width=max(found_min, 0))
    table.add_column("fix", overflow="fold", min_width=max(fix_min, 0))
    for c in checks:
        row = [escape(c.name), styled(c.status), escape(c.message), escape(c.fix)]
        table.add_row(*([escape(c.node or "-")] if cluster else []), *row)
    return table


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
    from gspo_cli.env.doctor import exports_here
    from gspo_cli.errors import ConfigError

    if fmt not in ("sh", "json"):
        raise ConfigError(f"--format {fmt!r}: choose sh or json")
    result = exports_here(_load(preset, sets), stack=stack, head=head)
    if fmt == "json":
        from gspo_cli.console import print_json

        print_json(result.as_dict())
    else:
        import sys

        sys.stdout.write(result.as_sh())

"""`gspo train --preset P`: load the preset, pick its engine from the registry, launch (Ray job or --local)."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def train_command(
    preset: str = options.preset(),
    sets: list[str] | None = options.sets(),
    run_name: str = typer.Option(None, "--run-name",
                                 help="Run folder under $GSPO_HOME/runs, both engines: --run-name, else "
                                      "trainer.experiment_name, else native: the preset name (so the same command "
                                      "resumes), verl: <preset>-<timestamp> (a new run each time). A name that "
                                      "has checkpoints resumes from its newest one."),
    local: bool = options.local(),
    address: str = options.address(),
    json_out: bool = options.json_out("Print the job's result as JSON on stdout."),
    dry_run: bool = typer.Option(False, "--dry-run", help="The verdict first (every error and warning with its fix), "
                                 "then the details: the engine's preflight (verl: also its schema check); launches "
                                 "and creates nothing (exit 2 on errors)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="With --dry-run: every detail (verl: the full "
                                 "preflight table, overrides, env and entrypoint). verl run: also stream verl's "
                                 "and vLLM's own output (by default it goes to the job log only: "
                                 "`gspo jobs logs ID`)."),
    resume: str = typer.Option(None, "--resume", metavar="RUN", help="Continue RUN from its newest global_step_N "
                               "with its saved config (--set changes are applied and shown)."),
) -> None:
    """Train a policy with GSPO using the preset's engine (native on one device, or verl on a cluster)."""
    from gspo_cli.engines.train_flow import train
    from gspo_cli.plan import dry_run_line

    code = train(preset, list(sets or []), resume=resume, plan_line=dry_run_line, run_name=run_name, local=local,
                 address=address, json_out=json_out, dry_run=dry_run, verbose=verbose)
    if code:
        raise typer.Exit(code)

"""`gspo accept`: run the upstream nightly job a preset reproduces and judge it against upstream's baseline."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def accept_command(
    preset: str = options.preset(help="The preset whose job to run and judge (`gspo accept --list`: the presets "
                                      "with an upstream baseline)."),
    sets: list[str] | None = options.sets("actor.lr=2e-3"),
    baseline: str = typer.Option(None, "--baseline", metavar="FILE|ID",
                                 help="Judge against this baseline: a file `--record` wrote, upstream's own "
                                      "baseline .txt, or a shipped id (default: the preset's upstream baseline, "
                                      "else the one recorded for it under $GSPO_HOME/baselines)."),
    record: bool = typer.Option(False, "--record", help="Run the preset's job (15 steps, no checkpoints, no "
                                "validation) and store its values as this cluster's baseline instead of judging."),
    repeat: int = typer.Option(1, "--repeat", metavar="N", help="With --record: run the job N times; the baseline "
                               "is their mean, and a limit tighter than their spread widens to it (an engine or "
                               "host that does not repeat a run exactly)."),
    output: str = typer.Option(None, "--output", "-o", metavar="FILE",
                               help="With --record: write here (default $GSPO_HOME/baselines/<preset>.json)."),
    run: str = typer.Option(None, "--run", metavar="RUN", help="Judge (or --record from) this finished run "
                            "instead of training a new one."),
    list_: bool = typer.Option(False, "--list", help="List the shipped upstream baselines and the recorded ones, "
                               "with their sources, and exit."),
    local: bool = options.local(),
    address: str = options.address(),
    json_out: bool = options.json_out("Print the verdict (or the list) as JSON on stdout."),
) -> None:
    """Does this cluster reproduce upstream? Run the nightly job and judge steps 5-14 against the baseline.

    verl's NPU nightly CI runs short GSPO jobs (15 steps) on Atlas A2/A3 machines and checks them with
    verl-ascend-recipe's baseline/check_npu.py; gspo ships those baselines with their source. The window and
    the tolerances are the checker's: mean of steps 5-14, critic/rewards/mean ±0.05, rollout_probs_diff_mean,
    perf/throughput and timing_s/step ±5 %, actor memory at the last step ±1 GB. Exit 0 on pass, 1 on fail.

    [bold]gspo accept --list[/]

    [bold]gspo prepare-data --preset nightly-gspo-qwen3-8b-a2 && gspo accept --preset nightly-gspo-qwen3-8b-a2[/]

    On any cluster (or this laptop), a baseline of your own, then the check against it:

    [bold]gspo accept --preset tiny --record --local[/]

    [bold]gspo accept --preset tiny --local[/]    [dim](and with --set actor.lr=2e-3: a changed setting fails)[/]
    """
    from gspo_cli import untrusted
    from gspo_cli.accept import service, view
    from gspo_cli.console import emit, err, out
    from gspo_cli.engines.verl.preflight import evaluate  # the planner's verdicts are preflight's (plan/memory.py)
    from gspo_cli.plan import run_cost

    if list_:
        found = service.list_baselines()
        untrusted.print_skipped(err)  # a bad recorded baseline costs its own line
        emit(json_out, view.list_data(found), view.render_list, found, out)
        return
    req = service.AcceptRequest(preset=preset, sets=list(sets or []), baseline=baseline, run=run, record=record,
                                repeat=repeat, output=output, local=local, address=address,
                                record_cost=lambda: run_cost(service.record_preset(preset, list(sets or [])),
                                                             preflight=evaluate),
                                on_job=lambda job: view.render_job(job, err))  # before anything starts
    outcome = service.accept(req)
    untrusted.print_skipped(err)
    emit(json_out, outcome.as_dict(), view.render, outcome, out)
    raise typer.Exit(outcome.exit_code)

"""`gspo plan`: predicted step time and throughput of a preset, a faster layout, and calibration from a run."""

from __future__ import annotations

import typer

from gspo_cli.cli import options


def plan_command(
    preset: str = options.preset(),
    sets: list[str] | None = options.sets(),
    nodes: int = typer.Option(None, "--nodes", min=1, help="Plan for this many nodes instead of the preset's."),
    devices: int = typer.Option(None, "--devices", min=1, help="Devices per node instead of the preset's."),
    profile: str = typer.Option(None, "--profile", help="Device profile: a2, a3, h100, h200, cpu, or one saved with "
                                "--save-profile (default: the preset's cluster.profile)."),
    json_out: bool = options.json_out("Machine-readable output (step_s, phases, tokens_per_device_per_s, "
                                      "bottleneck, layouts, ...)."),
    write_preset: str = typer.Option(None, "--write-preset", metavar="NEW.yaml",
                                     help="Save the fastest accepted layout as a preset extending this one."),
    calibrate: str = typer.Option(None, "--calibrate", metavar="RUN", help="Compare the model with RUN's measured "
                                  "timing_s/* per phase and fit the profile factors to it."),
    save_profile: str = typer.Option(None, "--save-profile", metavar="NAME",
                                     help="With --calibrate: keep the fitted factors as profile NAME."),
    top: int = typer.Option(8, "--top", min=1, help="How many layouts to list."),
    search: bool = typer.Option(True, "--search/--no-search", help="Search faster layouts (default on)."),
) -> None:
    """Predict one training step of a preset before booking the cluster, and find faster layouts.

    Prints seconds per phase (verl's timing names), tokens per device per second and the bottleneck, then the \
layouts preflight accepts, fastest first, each with its memory verdict and the --set lines that produce it.

    The model is arithmetic on the device profile (HBM bandwidth, FLOPs, links) with efficiency factors fitted \
to published and measured runs; docs/plan.md has the calibration table and where the model is weak. \
Response lengths are an assumption until --calibrate RUN reads a real run's.
    """
    from gspo_cli.console import emit
    from gspo_cli.engines.verl.preflight import evaluate  # the planner's verdicts are preflight's (plan/memory.py)
    from gspo_cli.plan import flow, view

    planned = flow.run(flow.PlanRequest(preset=preset, sets=list(sets or []), nodes=nodes, devices=devices,
                                        profile=profile, write_preset=write_preset, calibrate=calibrate,
                                        save_profile=save_profile, top=top, search=search),
                       preflight=evaluate)
    emit(json_out, planned.as_dict(), view.render, planned)

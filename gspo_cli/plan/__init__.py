"""Step-time planning (`gspo plan`): predict a step's seconds per phase and throughput, search faster layouts.

Pure arithmetic, no torch, no engine import: `workload` (what a step does), `model` (seconds per phase on a
hardware profile of gspo_cli.sizing.profiles: device numbers and fitted factors, with sources), `calibration`
(measured points and the fit), `layouts` (search over the layouts the engine's preflight accepts, handed in as a
`sizing.report.Preflight`), `feedback` (`--calibrate RUN`), `service` (what the CLI and the dry-run call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.report import Preflight, Report


def dry_run_line(preset: Preset, report: Report | None = None) -> str:
    """The one-line prediction `gspo train --dry-run` prints for the preset as given."""
    from gspo_cli.plan.service import dry_run_line as line

    return line(preset, report)


def run_cost(preset: Preset, steps: int | None = None, *, preflight: Preflight) -> str:
    """What a run of `steps` steps of the preset costs by the step-time model (`gspo accept`'s --record hint);
    `preflight` is the engine's checks (the verdict of the layout)."""
    from gspo_cli.plan.service import run_cost as cost

    return cost(preset, steps, preflight=preflight)

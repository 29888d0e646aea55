"""What `gspo train` hands an engine (`TrainRequest`) and what every engine implements (`Launcher`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.report import Report


@dataclass
class TrainRequest:
    """What `gspo train` was asked: the loaded preset plus the flags (engines ignore flags they do not use)."""

    preset: Preset  # already resolved with --set
    preset_ref: str  # the name or path given, so a job can reload it
    sets: list[str] = field(default_factory=list)
    run_name: str | None = None
    local: bool = False
    address: str | None = None
    json_out: bool = False
    follow: bool = True
    dry_run: bool = False
    resume: str | None = None
    # (preset, preflight report) -> gspo plan's one-line prediction for the verl dry-run; the CLI passes
    # gspo_cli.plan.dry_run_line (the planner is a layer above the engines, so they cannot import it)
    plan_line: Callable[[Preset, Report], str] | None = None
    verbose: bool = False  # --dry-run: every detail, not the folded view; verl run: stream verl's own output too
    trust_remote_code: str | None = None  # where model.trust_remote_code was turned on (config/trust.py); None: off


class Launcher(Protocol):
    """The one thing an engine implements: turn a `gspo train` request into a run and return the exit code."""

    def __call__(self, req: TrainRequest) -> int: ...

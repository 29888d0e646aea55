"""What `gspo plan` does between its options and its output (plan/view.py): plan a preset (and save its fastest
layout as a preset), or calibrate the model against a run (and save the fitted profile)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from gspo_cli.sizing.report import Preflight


@dataclass
class PlanRequest:
    preset: str | None = None
    sets: list[str] = field(default_factory=list)
    nodes: int | None = None
    devices: int | None = None
    profile: str | None = None
    write_preset: str | None = None
    calibrate: str | None = None
    save_profile: str | None = None
    top: int = 8
    search: bool = True


@dataclass
class Planned:
    """A plan (`result`: service.PlanResult, `written`: the preset --write-preset wrote) or a calibration
    (`result`: feedback.Calibration, `written`: the profile --save-profile saved)."""

    calibration: bool
    result: Any
    written: Path | None

    def as_dict(self) -> dict[str, Any]:
        """`gspo plan --json`: the result's own JSON and what was written."""
        key = "saved_profile" if self.calibration else "written_preset"
        return self.result.to_json() | {key: str(self.written) if self.written else None}


def run(req: PlanRequest, *, preflight: Preflight) -> Planned:
    """`preflight`: the engine's checks the layouts are judged by, handed in from above (the planner imports no
    engine)."""
    if req.save_profile and not req.calibrate:
        raise ConfigError("--save-profile needs --calibrate RUN", "gspo plan --calibrate RUN --save-profile NAME")
    if req.calibrate:
        from gspo_cli.plan import feedback

        fitted = feedback.calibrate(req.calibrate, req.profile)
        return Planned(True, fitted, feedback.save(fitted, req.save_profile) if req.save_profile else None)
    if not req.preset:
        raise ConfigError("no preset given", "pass --preset NAME (see `gspo presets list`) or --calibrate RUN")
    from gspo_cli.config.presets import load_preset
    from gspo_cli.plan import service

    result = service.plan(load_preset(req.preset, req.sets), preflight=preflight, profile=req.profile,
                          nodes=req.nodes, devices=req.devices, search=req.search or bool(req.write_preset), top=req.top,
                          ref=req.preset, sets=req.sets)
    written = service.write_preset(result, req.preset, req.write_preset) if req.write_preset else None
    return Planned(False, result, written)

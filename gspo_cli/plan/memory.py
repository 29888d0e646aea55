"""The one door from the planner to preflight: model facts, and the memory verdict of a candidate layout.

Memory verdicts are preflight's (the same checks `gspo train --dry-run` runs), never the planner's own: a
layout preflight rejects is never proposed. The planner imports no engine: the engine's preflight comes in as a
`Preflight` (gspo_cli.sizing.report; the CLI hands it verl's `evaluate`), and only its `Report` is read, only
through this module, so a change of preflight's internals is fixed in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gspo_cli.sizing import profiles

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts
    from gspo_cli.sizing.report import Preflight


@dataclass
class Verdict:
    status: str  # ok | warn | error
    memory: str  # preflight's memory lines, short
    problems: list[str] = field(default_factory=list)  # error / warning messages, "name: message"
    kv_capacity_tokens: int | None = None


def facts(preset: Preset) -> ModelFacts | None:
    """The ModelFacts of the preset's model (a built-in model by its own config), or None."""
    from gspo_cli.models.hub_model import local_path
    from gspo_cli.sizing.model_facts import facts_for

    return facts_for(local_path(preset))  # a prepared hub model: its config.json


def with_profile(preset: Preset, profile_name: str | None) -> Preset:
    """The preset with cluster.profile set to the `cluster.profile` name of `profile_name` (memory checks use it)."""
    if not profile_name:
        return preset
    prof = profiles.get(profile_name)
    name = profiles.preset_name(prof.name if prof is not None else profile_name)
    return preset.model_copy(update={"cluster": preset.cluster.model_copy(update={"profile": name})})


def verdict(preset: Preset, model_facts: ModelFacts, preflight: Preflight) -> Verdict:
    """Preflight's verdict for `preset` (data checks skipped: a layout does not change the prepared data)."""
    report = preflight(preset, model_facts, None)
    # errors first: the layout search names a rejected layout by its first problem
    problems = [f"{c.name}: {c.message}" for status in ("error", "warn") for c in report.checks if c.status == status]
    status = "error" if report.errors else ("warn" if report.warnings else "ok")
    mem_checks = [c for c in report.checks if "memory" in c.name]
    memory = "; ".join(f"{c.name} {c.status}" for c in mem_checks)
    kv = (report.estimates.get("memory") or {}).get("kv_cache_tokens")
    return Verdict(status, memory, problems, int(kv) if isinstance(kv, (int, float)) else None)

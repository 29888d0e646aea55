"""What a preflight answers with (`Report`: checks and estimates) and the prepared-data facts it reads; the planner
reads both without importing an engine (a layout's verdict, a run's steps).

`Preflight` is the engine's check of a preset (verl's: engines/verl/preflight.evaluate): the layer above the
planner hands it to plan/ (cli/plan.py, cli/accept.py), so the planner's memory verdict is the engine's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gspo_cli.checks import Check
from gspo_cli.shell import quote

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts


@dataclass
class DataFacts:
    train_rows: int | None = None
    val_rows: int | None = None
    train_rows_in: int | None = None  # rows of the raw training file before deduplication (manifest rows_in)
    error: str | None = None  # why the rows are unknown (not prepared, stale manifest, ...)
    fix: str | None = None


def data_facts(preset: Preset) -> DataFacts:
    """Rows of the prepared train/val splits from their manifests; the prepare-data check when available."""
    from gspo_cli.data.manifest import check_prepared, manifest_path
    from gspo_cli.errors import GspoError

    facts = DataFacts()
    try:
        check_prepared(preset)
    except GspoError as exc:
        facts.error, facts.fix = exc.message, exc.hint
    for split, spec in (("train", preset.data.train), ("val", preset.data.val)):
        mpath = manifest_path(spec.source, preset)
        try:
            manifest = json.loads(mpath.read_text(encoding="utf-8"))
            rows = manifest["outputs"][split]["rows"]
            if split == "train" and isinstance(manifest.get("rows_in"), int):
                facts.train_rows_in = manifest["rows_in"]
        except (OSError, ValueError, KeyError, TypeError):
            rows = None
            if facts.error is None:
                facts.error = f"dataset {spec.source} is not prepared ({mpath} missing or has no {split} split)"
                facts.fix = f"run: gspo prepare-data --preset {quote(preset.name)}"
        setattr(facts, f"{split}_rows", rows)
    return facts


@dataclass
class Report:
    checks: list[Check]
    estimates: dict[str, Any]

    @property
    def errors(self) -> list[Check]:
        return [c for c in self.checks if c.status == "error"]

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.status == "warn"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.to_dict() for c in self.checks], "estimates": self.estimates}


# (preset, model facts or None, prepared-data facts or None) -> the engine's report on the preset
Preflight = Callable[["Preset", "ModelFacts | None", "DataFacts | None"], Report]


def add(checks: list[Check], name, ok, message, keys=(), *, fix=None, level="error") -> None:
    """Append a check that is ok when `ok`, else `level` with its `fix`."""
    checks.append(Check(name, "ok" if ok else level, message, list(keys), None if ok else fix))

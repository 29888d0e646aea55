"""What a native run reads first, checked in the CLI (launch) and by the dry-run alike: the run's name and folder,
and the prepared data (present, prepared with this preset's settings). Light: no torch."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli.errors import DataError
from gspo_cli.runs.names import run_dir_for
from gspo_cli.shell import quote

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import TrainRequest


def run_name_for(req: TrainRequest) -> str:
    from gspo_cli.runs.names import check_name

    return check_name(req.run_name or req.preset.trainer.experiment_name or req.preset.name)


def check_inputs(req: TrainRequest) -> None:
    """Prepared data present and prepared with this preset's settings (what the job would read first)."""
    from gspo_cli.data.manifest import train_file, val_file

    preset = req.preset
    needed = [train_file(preset)]
    if preset.trainer.test_freq > 0 or preset.trainer.val_before_train:
        needed.append(val_file(preset))
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        from gspo_cli.data.manifest import check_prepared

        # why (never prepared, or prepared with other settings), with a fix that makes this preset's data
        check_prepared(preset, preset_ref=req.preset_ref, sets=req.sets)
        raise DataError(f"prepared data missing: {', '.join(missing)}",
                        f"run: gspo prepare-data --preset {quote(req.preset_ref)}")
    _check_manifests(preset)



def run_path(req: TrainRequest) -> Path:
    return run_dir_for(run_name_for(req), req.preset).resolve()


def _check_manifests(preset: Preset) -> None:
    """Refuse data prepared with other settings (e.g. after --set data.arith.*). Parquet written without
    prepare-data (no manifest at all) is trusted as given."""
    from gspo_cli.data import manifest

    sources = {preset.data.train.source, preset.data.val.source}
    if all(manifest.manifest_path(source, preset).is_file() for source in sources):
        manifest.check_prepared(preset)

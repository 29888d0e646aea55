"""`gspo prepare-model`: fetch the preset's pinned hub model once into $GSPO_HOME (models/hub_fetch.py)."""

from __future__ import annotations

from gspo_cli.cli import options


def prepare_model_command(
    preset: str = options.preset(required=True, help="Preset whose model.path / model.revision / hub to fetch."),
    force: bool = options.force("Fetch again even when the prepared folder matches its manifest."),
    sets: list[str] | None = options.sets("model.revision=v1.0"),
    json_out: bool = options.json_out("Print the report as JSON to stdout."),
) -> None:
    """Fetch a hub model at its pinned revision (Hugging Face or ModelScope) into $GSPO_HOME, with a manifest."""
    from gspo_cli.config import trust
    from gspo_cli.config.presets import load
    from gspo_cli.console import emit
    from gspo_cli.models import hub_fetch, view

    loaded = load(preset, list(sets or []))
    trust.say(loaded)  # on: the repo's *.py files are fetched too, and will run
    report = hub_fetch.prepare(loaded.preset, force=force, ref=preset)
    emit(json_out, report, view.render_prepared, report)

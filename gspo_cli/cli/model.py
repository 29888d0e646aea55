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
    from gspo_cli.console import err, out, print_json
    from gspo_cli.models import hub_fetch

    loaded = load(preset, list(sets or []))
    trust.say(loaded)  # on: the repo's *.py files are fetched too, and will run
    report = hub_fetch.prepare(loaded.preset, force=force, ref=preset)
    if json_out:
        print_json(report)
        return
    hub = f"{report['hub']} {report['endpoint']}"
    err.print(f"{report['status']}: {report['repo']}@{report['revision']} from {hub} ({report['summary']})",
              highlight=False, markup=False, soft_wrap=True)
    out.print(report["folder"], highlight=False, markup=False, soft_wrap=True)

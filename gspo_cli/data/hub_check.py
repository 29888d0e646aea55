"""The dry-run's `hub` rows: which hub the preset downloads from, whether each dataset it would download is pinned
there, whether a pinned hub model is prepared (`hub model`: models/hub_model.py), and whether this host has the
hub's client. No network and no import of the clients (find_spec only)."""

from __future__ import annotations

import importlib.util

from gspo_cli.checks import ERROR, INFO, OK, WARN, Check
from gspo_cli.config import hub as hubs
from gspo_cli.errors import ConfigError


def checks(preset, *, ref: str | None = None, model: bool = True) -> list[Check]:
    """`ref`: the preset as the user named it (for the command in a fix); `model`: add the `hub model` row (the
    native dry-run says it in its own `model` row)."""
    try:
        hub = hubs.of(preset)
    except ConfigError as exc:  # a bad HF_ENDPOINT / MODELSCOPE_ENDPOINT in this shell
        return [Check("hub", ERROR, exc.message, ["hub"], exc.hint or "")]
    from gspo_cli.models import hub_model

    pinned = hub_model.check(preset, ref, "hub model") if model else None  # verl's `model` row: its shape
    rows = [pinned[0]] if pinned else []
    if hub.chosen_by == "default" and hub.endpoint is None:
        return rows  # the Hugging Face Hub as always: nothing more to say (no noise on every dry-run)
    out = [Check("hub", INFO, hub.describe(), ["hub.name", "hub.endpoint"]), *rows]
    out += [c for split in ("train", "val") if (c := _dataset(preset, hub, split)) is not None]
    if hub.name == hubs.MODELSCOPE and importlib.util.find_spec("modelscope") is None:
        out.append(Check("hub client", WARN, "modelscope is not installed here: `gspo prepare-data --local` and "
                         "`gspo prepare-model` cannot download from ModelScope on this host", ["hub.name"],
                         hubs.MODELSCOPE_INSTALL))
    return out


def _dataset(preset, hub: hubs.Hub, split: str) -> Check | None:
    """One row for a dataset the preset downloads (none for a local input or a generated source)."""
    from gspo_cli.data import sources

    spec = getattr(preset.data, split)
    source = sources.SOURCES.get(spec.source)
    if spec.input or source is None or not source.needs_input:
        return None
    repo = spec.hub_repo or source.hub_repo
    key = f"data.{split}.revision"
    try:
        hub.require_pinned(spec.revision, key, f"{spec.source} ({repo})")
    except ConfigError as exc:
        return Check(f"hub data.{split}", ERROR, exc.message, [key, f"data.{split}.hub_repo"], exc.hint or "")
    pin = f"@{spec.revision}" if spec.revision else " (revision not pinned: the hub's main branch)"
    return Check(f"hub data.{split}", OK, f"{spec.source}: {hub.title} dataset {repo}{pin}", [key])

"""Load the policy and its tokenizer from `model.path`: `builtin:NAME` (models/builtin.py: tiny.py, tiny_moe.py), a
local HF folder, or a hub id."""

from __future__ import annotations

from pathlib import Path

from gspo_cli.errors import ConfigError

BUILTIN_PREFIX = "builtin:"


def builtin_name(path: str) -> str:
    """`tiny` of `builtin:tiny`, checked against the built-in models (no torch imported)."""
    from gspo_cli.models.builtin import names

    BUILTIN_MODELS = names()
    name = path[len(BUILTIN_PREFIX):]
    if name not in BUILTIN_MODELS:
        raise ConfigError(f"unknown built-in model {path!r}",
                          "the built-in models are " + ", ".join(f"builtin:{n}" for n in BUILTIN_MODELS))
    return name


def resolve_model_path(path: str) -> str:
    """A loadable path or hub id; `builtin:NAME` is built (once, cached under $GSPO_HOME/models)."""
    if path.startswith(BUILTIN_PREFIX):
        from gspo_cli.models.builtin import ensure

        return str(ensure(builtin_name(path)))
    local = Path(path).expanduser()
    return str(local) if local.exists() else path  # else a hub id: transformers downloads it when it can


def model_folder(preset) -> str | None:
    """The folder verl loads instead of `model.path`: a `builtin:NAME` model's (built once, offline) or a pinned hub
    model's (`gspo prepare-model`, whether there yet or not: the dry-run's `model` row says); None: model.path."""
    from gspo_cli.models import hub_model

    if preset.model.path.startswith(BUILTIN_PREFIX):
        return resolve_model_path(preset.model.path)
    try:
        model = hub_model.of(preset)
    except ConfigError:
        return None  # the `model` row says why (ModelScope without a revision, a path that is no hub id)
    return str(model.folder) if model is not None else None


def resolve_preset_model(preset, ref: str | None = None) -> str:
    """What the preset's `model.path` loads from: a pinned hub model's prepared folder (checked against its
    manifest; ConfigError naming `gspo prepare-model` when not prepared: models/hub_model.py), else
    `resolve_model_path`."""
    from gspo_cli.models import hub_model

    model = hub_model.of(preset)
    if model is not None:
        return str(hub_model.require_prepared(model, ref, preset))
    return resolve_model_path(preset.model.path)


def load_tokenizer(path: str, trust_remote_code: bool = False):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_model(path: str, dtype: str = "float32", device=None, trust_remote_code: bool = False):
    import torch
    from transformers import AutoModelForCausalLM

    from gspo_cli.models.safe_load import refusing_pickles

    with refusing_pickles(path):  # transformers loads *.bin weights-only; a refusal is one line
        model = AutoModelForCausalLM.from_pretrained(
            path, dtype=getattr(torch, dtype), trust_remote_code=trust_remote_code
        )
    return model.to(device) if device is not None else model

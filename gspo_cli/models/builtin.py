"""The built-in models by name (`model.path: builtin:NAME`): the dense tiny Qwen3s (models/tiny.py) and the tiny
Qwen3-MoE (models/tiny_moe.py). One table, so loading, the planner and the dry-run find every built-in model
without knowing which module builds it. No torch imported here."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType


def _modules() -> tuple[ModuleType, ...]:
    from gspo_cli.models import tiny, tiny_moe

    return (tiny, tiny_moe)


def names() -> tuple[str, ...]:
    return tuple(n for module in _modules() for n in module.BUILTIN_MODELS)


def _module(name: str) -> ModuleType:
    for module in _modules():
        if name in module.BUILTIN_MODELS:
            return module
    raise ValueError(f"unknown built-in model {name!r}; known: {', '.join(names())}")


def default_dir(name: str) -> Path:
    """Where built-in model `name` is cached under $GSPO_HOME/models (built or not)."""
    return _module(name).default_dir(name)


def shape(name: str) -> dict:
    """The config values a built-in model is built with (its SHAPES entry; a warm start has its base's shape)."""
    module = _module(name)
    base = getattr(module, "base_shape_name", lambda n: n)(name)
    return dict(module.SHAPES[base])


def ensure(name: str, dest: str | Path | None = None) -> Path:
    """The folder of built-in model `name`, built on first use."""
    from gspo_cli.models import tiny, tiny_moe

    module = _module(name)
    if module is tiny_moe:
        return tiny_moe.ensure_tiny_moe_model(dest, name=name)
    return tiny.ensure_tiny_model(dest, name=name)

"""The built-in models by name (`model.path: builtin:NAME`): the dense tiny Qwen3s (models/tiny.py) and the tiny
Qwen3-MoE (models/tiny_moe.py). One registry whose entry says which module builds a model, with which builder
and shape, so loading, the planner and the dry-run find every built-in model without knowing which module builds
it. No torch imported here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

from gspo_cli.registry import Registry


@dataclass(frozen=True)
class BuiltinModel:
    module: ModuleType  # the module that builds it: its default_dir and SHAPES
    build: Callable[..., Path]  # (dest, name=NAME) -> its folder, built on first use
    base: str  # its key in module.SHAPES (a warm start has its base's shape)


@cache
def _registry() -> Registry[BuiltinModel]:
    from gspo_cli.models import tiny, tiny_moe

    models: Registry[BuiltinModel] = Registry("built-in model", key="model.path builtin:")
    for name in tiny.BUILTIN_MODELS:
        models.add(name, BuiltinModel(tiny, tiny.ensure_tiny_model, tiny.base_shape_name(name)))
    for name in tiny_moe.BUILTIN_MODELS:
        models.add(name, BuiltinModel(tiny_moe, tiny_moe.ensure_tiny_moe_model, name))
    return models


def names() -> tuple[str, ...]:
    return tuple(_registry())


def _entry(name: str) -> BuiltinModel:
    # Not Registry.lookup: this ValueError (and its wording) predates the registry; callers catch it.
    entry = _registry().get(name)
    if entry is None:
        raise ValueError(f"unknown built-in model {name!r}; known: {', '.join(names())}")
    return entry


def default_dir(name: str) -> Path:
    """Where built-in model `name` is cached under $GSPO_HOME/models (built or not)."""
    return _entry(name).module.default_dir(name)


def shape(name: str) -> dict:
    """The config values a built-in model is built with (its SHAPES entry; a warm start has its base's shape)."""
    entry = _entry(name)
    return dict(entry.module.SHAPES[entry.base])


def ensure(name: str, dest: str | Path | None = None) -> Path:
    """The folder of built-in model `name`, built on first use."""
    return _entry(name).build(dest, name=name)

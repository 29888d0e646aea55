"""Check compiled overrides against the verl that is installed, before anything touches Ray.

Two stages, both verl's own code paths:

1. compose: Hydra's compose API on verl's `ppo_trainer` config in struct mode, as `@hydra.main` in
   `verl.trainer.main_ppo` does. An unknown key or a malformed override fails here (~0.3 s, no torch import).
   A value whose type cannot be the type of verl's default (a word where verl has a number, a number where
   verl has a list, ...) is also rejected here, so a typo'd value does not wait for stage 2.
2. validate: verl's `validate_config` (which builds the actor config dataclass and runs its checks) plus the
   rollout and algorithm dataclasses, i.e. what `main_ppo.main` runs before `ray.init`. This imports verl,
   torch and transformers (~3-4 s on a 2-core machine), so its verdict is cached per verl version and
   overrides (run-specific paths normalised) under `$GSPO_HOME/cache/verl-check/`.

A cached verdict is written only after both stages passed, so a warm check (same verl, same overrides) returns it
without composing at all: Hydra's compose of verl's config was ~1.9 s of a 2.1 s warm dry-run on 2 loaded cores.

Every failure names the verl override and the preset key it came from (file:line or the `--set` that made it).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.engines.verl.compile import Compiled, override_key
from gspo_cli.errors import ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig

    from gspo_cli.config.presets import LoadedPreset


@dataclass
class SchemaResult:
    verl_version: str
    compose_s: float
    validate_s: float = 0.0
    validated: bool = False  # stage 2 ran (or its cached verdict was used)
    cached: bool = False
    messages: list[str] = field(default_factory=list)


def verl_root() -> Path:
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("verl is not installed in this Python", "pip install 'gspo[verl]' (verl>=0.9.1,<0.10)")
    return Path(list(spec.submodule_search_locations)[0])


def verl_version() -> str:
    """verl's version without importing verl (its __init__ imports torch and ray)."""
    try:
        return (verl_root() / "version" / "version").read_text(encoding="utf-8").strip()
    except OSError:
        from importlib.metadata import version

        return version("verl")


def config_dir() -> Path:
    return verl_root() / "trainer" / "config"


# ---------------------------------------------------------------- naming the culprit


def _describe_origin(compiled: Compiled, key: str, loaded: LoadedPreset | None = None) -> str:
    """`preset key (file:line)` for a verl key, as precisely as known."""
    origin = compiled.origins.get(key)
    if origin is None:
        return "not from the preset"
    if loaded is not None and not origin.startswith("derived"):
        from gspo_cli.config.presets import origin_of

        path = origin.replace("[", ".").replace("]", "") if origin.startswith("overrides.verl") else origin
        where = origin_of(loaded, path)
        if where:
            return f"preset key {origin} ({where})"
    return f"preset key {origin}" if not origin.startswith("derived") else origin


def _culprit(message: str, overrides: list[str]) -> str | None:
    """The override a Hydra/verl message is about: the longest key (or full override) named in it."""
    best: str | None = None
    # Later overrides win in Hydra, so the last item with a key is the one in effect.
    for item in reversed(overrides):
        key = override_key(item)
        if item in message or f"'{key}'" in message or re.search(rf"(?<![\w.]){re.escape(key)}(?![\w])", message):
            if best is None or len(key) > len(override_key(best)):
                best = item
    if best is None:
        # verl's validators name the leaf ("ppo_mini_batch_size (64)"); match on the last component.
        for item in reversed(overrides):
            leaf = override_key(item).rsplit(".", 1)[-1]
            if re.search(rf"\b{re.escape(leaf)}\b", message):
                return item
    return best


def _fail(stage: str, message: str, compiled: Compiled, loaded: LoadedPreset | None = None,
          item: str | None = None) -> ConfigError:
    message = " ".join(message.strip().split())
    item = item or _culprit(message, compiled.overrides)
    if item is None:
        return ConfigError(f"verl {verl_version()} rejected the configuration ({stage}): {message}",
                           "see the overrides with `gspo train --dry-run`")
    key = override_key(item)
    return ConfigError(
        f"verl {verl_version()} rejected override `{item}` ({stage}): {message}; it comes from "
        f"{_describe_origin(compiled, key, loaded)}",
        "fix that preset key (verl's schema: verl/trainer/config/_generated_ppo_trainer.yaml)",
    )


# ---------------------------------------------------------------- stage 1: compose


def compose(overrides: list[str]) -> DictConfig:
    """verl's `ppo_trainer` config with `overrides`, composed like `main_ppo` (struct mode). Raises Hydra errors."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=list(overrides))


_BASE_CACHE: dict[str, Any] = {}
# Set (to anything): compose and type-check even when the verdict is cached (the behaviour before the warm path
# skipped stage 1; benchmarks/dry_run.py times both).
RECOMPOSE_VAR = "GSPO_VERL_CHECK_RECOMPOSE"


def _base(cfg_overrides: tuple[str, ...] = ("actor_rollout_ref.rollout.name=vllm",)):
    """verl's defaults (composed once per process)."""
    if "cfg" not in _BASE_CACHE:
        _BASE_CACHE["cfg"] = compose(list(cfg_overrides))
    return _BASE_CACHE["cfg"]


def _type_problem(default: Any, value: Any) -> str | None:
    """Why `value` cannot replace verl's `default`, judged by type only; None when it can."""
    if default is None or value is None:
        return None
    if isinstance(default, str) and default.startswith("${"):
        return None  # an interpolation: verl's default type is not written down here
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"verl expects a boolean, got {value!r}"
    # An int default may be a float field (`entropy_coeff: 0`), so numbers are only told apart from non-numbers;
    # verl's dataclasses (stage 2) judge int vs float.
    if isinstance(default, (int, float)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else f"verl expects a number, got {value!r}"
    if isinstance(default, list):
        return None if isinstance(value, list) else f"verl expects a list, got {value!r}"
    if isinstance(default, dict):
        return None if isinstance(value, dict) else f"verl expects a mapping, got {value!r}"
    return None


def _check_types(cfg, compiled: Compiled, loaded: LoadedPreset | None) -> None:

    base = _base()
    effective = {override_key(item): item for item in compiled.overrides}  # last one wins, as in Hydra
    for key, item in effective.items():
        if item.startswith(("+", "~")) or "=" not in item:
            continue
        pair = _default_and_value(base, cfg, key)
        if pair is None:  # a value we cannot read is left to stage 2
            continue
        problem = _type_problem(*pair)
        if problem:
            raise _fail("type", f"{key}: {problem}", compiled, loaded, item)


def _default_and_value(base, cfg, key: str) -> tuple[Any, Any] | None:
    """(verl's default, the composed value) at `key`; None where a path cannot be read: a key under a plain value
    (AttributeError: `optim.lr.x`), a list index by name or out of range (omegaconf's key and type errors)."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    node = OmegaConf.select(base, key, default=None, throw_on_missing=False)
    try:
        raw_default = OmegaConf.to_container(node) if OmegaConf.is_config(node) else node
        default = _raw_value(base, key) if not OmegaConf.is_config(node) else raw_default
        value = OmegaConf.select(cfg, key, default=None, throw_on_resolution_failure=False)
        value = OmegaConf.to_container(value) if OmegaConf.is_config(value) else value
    except (AttributeError, OmegaConfBaseException):
        return None
    return default, value


def _raw_value(cfg, key: str) -> Any:
    """The unresolved value at `key` (an interpolation stays a `${...}` string)."""
    parent_key, _, leaf = key.rpartition(".")
    from omegaconf import OmegaConf

    parent = OmegaConf.select(cfg, parent_key) if parent_key else cfg
    return parent._get_node(leaf)._value() if parent is not None else None


# ---------------------------------------------------------------- never instantiate a user's string


def _refuse_code(compiled: Compiled, loaded: LoadedPreset | None) -> None:
    """The preset schema refused these already (config/verl_strings.py); the compiled overrides are checked again
    because stage 2 builds objects from them: no interpolation in any override, no instantiation, Hydra, env or
    code key in an overrides.verl entry."""
    from gspo_cli.config.verl_strings import INTERPOLATION, override_problem

    for item in compiled.overrides:
        user = compiled.origins.get(override_key(item), "").startswith("overrides.verl")
        problem = override_problem(item) if user else (
            f"`{item}`: '${{' starts an OmegaConf interpolation" if INTERPOLATION in item else None)
        if problem:
            raise _fail("data check", problem, compiled, loaded, item)


def _verls_targets() -> set[str]:
    """Every `_target_` verl's own config files name (all config groups): the only classes stage 2 may build."""
    found: set[str] = set()
    for path in config_dir().rglob("*.yaml"):
        found.update(re.findall(r"^\s*_target_:\s*([\w.]+)\s*$", path.read_text(encoding="utf-8"), re.M))
    return found


def _only_verls_targets(cfg, compiled: Compiled, loaded: LoadedPreset | None) -> None:
    """Validate without instantiating anything from user strings: every `_target_` in the composed config (not
    resolved: resolving could itself create nodes) is one of verl's own."""
    from omegaconf import OmegaConf

    allowed = _verls_targets()

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "_target_" and value not in allowed:
                    raise _fail("data check", f"{path}._target_: {value!r} is not a class verl's config names; "
                                "nothing from a preset is instantiated", compiled, loaded)
                walk(value, f"{path}.{key}" if path else str(key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(OmegaConf.to_container(cfg, resolve=False), "")


# ---------------------------------------------------------------- stage 2: verl's own validators


def _cache_key(compiled: Compiled) -> str:
    # Run-specific parts never change verl's verdict: the run folder, and the run name (the experiment name of
    # presets that set none), so a new run of the same preset reuses the verdict.
    run_name = Path(compiled.run_dir).name
    norm = [o.replace(compiled.run_dir, "<RUN>") for o in compiled.overrides]
    norm = [f"{o.split('=', 1)[0]}=<RUN_NAME>" if o == f"trainer.experiment_name={run_name}" else o for o in norm]
    blob = json.dumps({"verl": verl_version(), "overrides": norm}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def cache_dir() -> Path:
    from gspo_cli import layout

    return layout.gspo_home() / "cache" / "verl-check"


def _validate_with_verl(cfg) -> str:
    """Run what `main_ppo.main` runs before Ray: verl's validate_config and its config dataclasses."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
        omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
        omega_conf_to_dataclass(cfg.algorithm)
    return buf.getvalue()


def check(compiled: Compiled, loaded: LoadedPreset | None = None, *, full: bool = True,
          use_cache: bool = True) -> SchemaResult:
    """Raise ConfigError naming the override and preset key if verl would reject `compiled`."""
    t0 = time.perf_counter()
    _refuse_code(compiled, loaded)
    marker = cache_dir() / f"{_cache_key(compiled)}.ok"
    if full and use_cache and marker.exists() and not os.environ.get(RECOMPOSE_VAR):
        # The marker is written only after these overrides composed, passed the type check and verl's validators
        # (same verl version, same key): its verdict covers stage 1 too, so the warm path skips Hydra entirely.
        return SchemaResult(verl_version=verl_version(), compose_s=0.0, validated=True, cached=True)
    try:
        cfg = compose(compiled.overrides)
    except Exception as exc:  # Hydra raises several types (ConfigCompositionException, OverrideParseException, ...)
        raise _fail("compose", _hydra_message(exc), compiled, loaded) from None
    _only_verls_targets(cfg, compiled, loaded)
    _check_types(cfg, compiled, loaded)
    result = SchemaResult(verl_version=verl_version(), compose_s=time.perf_counter() - t0)
    if not full:
        return result
    t1 = time.perf_counter()
    if use_cache and marker.exists():
        result.cached = True
    else:
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                printed = _validate_with_verl(cfg)
        except Exception as exc:  # verl uses assert, ValueError and Hydra instantiation errors
            raise _fail("validate", _hydra_message(exc), compiled, loaded) from None
        result.messages = [line for line in printed.splitlines() if line.strip()]
        if use_cache:
            with contextlib.suppress(OSError):
                from gspo_cli.fsutil import atomic_write_text

                atomic_write_text(marker, "\n".join(compiled.overrides) + "\n")
    result.validated = True
    result.validate_s = time.perf_counter() - t1
    return result


def _hydra_message(exc: BaseException) -> str:
    parts = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        text = str(cur).strip()
        if text and text not in parts:
            parts.append(text)
        cur = cur.__cause__ or cur.__context__
    return " <- ".join(parts) or "unknown error"


def cached_verdicts() -> int:
    d = cache_dir()
    return len(list(d.glob("*.ok"))) if d.is_dir() else 0

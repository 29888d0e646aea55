"""What each training engine supports, as data, checked when a preset is loaded for its `trainer.engine`.

A key an engine ignores is refused when the preset sets it, i.e. when its value differs from the schema default
(a key left at its default changes nothing, so copying a verl preset and switching the engine does not trip on
keys it never touched). Keys with a fixed set of values per engine (`actor.strategy`, `rollout.name`) take the
engine's first value when the preset leaves them out, so `gspo presets show --resolved` shows what runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gspo_cli.algo.losses import DEFAULT_POLICY_LOSS, POLICY_LOSSES, VERL_LOSS_NAMES
from gspo_cli.config.trackers import NATIVE_LOGGERS, VERL_LOGGERS
from gspo_cli.errors import ConfigError

_KL = "the native engine has no reference model, so no KL term; use trainer.engine: verl"
_FSDP = "the native engine trains one unsharded model on one device; use trainer.engine: verl"
_ASYNC = "the native engine generates and trains in turn on one device (sync); use trainer.engine: verl for async modes"
_VLLM = "the native engine generates with HF transformers (rollout.name: hf); use trainer.engine: verl for vLLM"
_DYN = ("the native engine splits batches by actor.ppo_micro_batch_size_per_device, not by tokens; "
        "use that key, or trainer.engine: verl")


@dataclass(frozen=True)
class EngineSupport:
    # key -> the values this engine runs, the first its default; a callable is read at each check (the loss
    # registry grows when a module registers a loss, after this module is imported)
    values: dict[str, tuple[Any, ...] | Callable[[], tuple[Any, ...]]] = field(default_factory=dict)
    # key -> why it is ignored and what to use instead
    ignored: dict[str, str] = field(default_factory=dict)
    # list-valued key -> the items this engine runs (trainer.loggers)
    items: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Python packages (import names) its jobs need (`gspo env doctor` reports a missing one; the engine spec's
    # required_environment says how to get it)
    packages: tuple[str, ...] = ()
    # a run continues with `gspo train --resume RUN` (else: rerun with the run's config and --run-name)
    resume_flag: bool = False

    def allowed(self) -> dict[str, tuple[Any, ...]]:
        """key -> the values this engine runs now, its default first."""
        return {k: v() if callable(v) else v for k, v in self.values.items()}


def _losses(names: Iterable[str]) -> tuple[str, ...]:
    """Registered policy losses (gspo_cli/algo/losses.py), the schema's default first (it is what a preset that
    leaves algorithm.loss_mode out gets)."""
    return (DEFAULT_POLICY_LOSS, *(n for n in names if n != DEFAULT_POLICY_LOSS))


ENGINES: dict[str, EngineSupport] = {
    "verl": EngineSupport(
        # verl 0.9.1's FSDP workers accept fsdp / fsdp2 (workers/config/engine.py); megatron compiles to its
        # Megatron engine (model_engine=megatron, engines/verl/megatron.py). verl 0.9.1 registers no hf rollout.
        values={"actor.strategy": ("fsdp2", "fsdp", "megatron"), "rollout.name": ("vllm",),
                # the losses verl 0.9.1 has an equal of (register_policy_loss(..., verl=NAME))
                "algorithm.loss_mode": lambda: _losses(VERL_LOSS_NAMES)},
        ignored={
            "trainer.device": "verl takes the device from cluster.device",
            "trainer.cpu_threads": "verl does not train on CPU; trainer.cpu_threads is for the native engine",
            "trainer.val_sequences_per_batch": "verl validates with its own batching; pass data.val_batch_size "
                                               "through overrides.verl",
            "trainer.routing_metrics_freq": "verl's FSDP actor exposes no routing; its rollout load balance is "
                                            "rollout.moe_load_balance_metrics_interval",
        },
        items={"trainer.loggers": VERL_LOGGERS},
        packages=("verl", "torch", "transformers"),
        resume_flag=True,
    ),
    "native": EngineSupport(
        values={"actor.strategy": ("native",), "rollout.name": ("hf",),
                # constant after the warmup: engines/native/trainer.py constant_with_warmup
                "actor.lr_scheduler_type": ("constant",),
                "algorithm.loss_mode": lambda: _losses(POLICY_LOSSES)},  # the native trainer runs every registered loss
        ignored={
            "algorithm.use_kl_in_reward": _KL, "algorithm.kl_coef": _KL,
            "algorithm.use_kl_loss": _KL, "algorithm.kl_loss_coef": _KL,
            "algorithm.rollout_correction": "the native engine samples with the policy it trains (no separate "
                                            "rollout engine, no train/rollout gap to correct); use trainer.engine: verl",
            "algorithm.filter_groups.enable": "the native engine trains on every group it samples (no DAPO dynamic "
                                              "sampling); use trainer.engine: verl",
            "rollout.calculate_log_probs": "the native engine recomputes old log-probs with the policy (or reuses "
                                           "the update's forward); use trainer.engine: verl",
            "actor.use_dynamic_bsz": _DYN, "actor.ppo_max_token_len_per_device": _DYN,
            "rollout.log_prob_max_token_len_per_device": _DYN,
            "actor.param_offload": _FSDP, "actor.optimizer_offload": _FSDP,
            "actor.ulysses_sequence_parallel_size": _FSDP, "actor.reshard_after_forward": _FSDP,
            "actor.forward_prefetch": _FSDP, "actor.entropy_checkpointing": _FSDP,
            "actor.entropy_from_logits_with_chunking": _FSDP, "actor.use_torch_compile": _FSDP,
            "model.use_remove_padding": _FSDP,
            "rollout.max_num_batched_tokens": _VLLM, "rollout.max_num_seqs": _VLLM,
            "rollout.enable_chunked_prefill": _VLLM, "rollout.enforce_eager": _VLLM,
            "rollout.cudagraph_capture_sizes": _VLLM, "rollout.cudagraph_mode": _VLLM,
            "rollout.update_weights_bucket_megabytes": _VLLM,
            "rollout.expert_parallel_size": _VLLM, "rollout.data_parallel_size": _VLLM,
            "rollout.moe_load_balance_metrics_interval": "the native engine logs its own rollout load balance "
                                                         "(rollout/moe/*) for MoE policies; see trainer.routing_metrics_freq",
            "cluster.nnodes": "the native engine runs on one device; use trainer.engine: verl for several",
            "cluster.devices_per_node": "the native engine runs on one device; use trainer.engine: verl for several",
            "trainer.balance_batch": "the native engine has one device to balance; use trainer.engine: verl",
            "overrides.verl": "verl overrides reach only the verl engine; set trainer.engine: verl or remove them",
            "trainer.mode": _ASYNC, "trainer.rollout_share": _ASYNC, "trainer.parameter_sync_step": _ASYNC,
            "cluster.host_memory_gib": _FSDP,
        },
        # tensorboard / wandb / swanlab as verl writes them (config/trackers.py, engines/native/trackers.py)
        items={"trainer.loggers": NATIVE_LOGGERS},
        packages=("torch", "transformers"),
        resume_flag=True,  # the run's name with its config (engines/native/launch.resumed)
    ),
}


def of(engine: str | None) -> EngineSupport | None:
    """What engine `engine` supports (None for an unknown or missing name)."""
    return ENGINES.get(engine or "")


def needs(preset: Any, package: str) -> bool:
    """Whether the preset's engine needs Python package `package` (an import name)."""
    support = of(getattr(getattr(preset, "trainer", None), "engine", None))
    return support is not None and package in support.packages


def fill_engine_values(data: Any) -> Any:
    """Raw preset mapping: `actor.strategy` and `rollout.name` default to the engine's own when not given."""
    if not isinstance(data, dict):
        return data
    trainer = data.get("trainer")
    engine = trainer.get("engine", "verl") if isinstance(trainer, dict) else "verl"
    support = ENGINES.get(engine)
    if support is None:
        return data  # the schema reports the unknown engine
    out = dict(data)
    for key, allowed in support.allowed().items():
        section, name = key.split(".")
        part = out.get(section, {})
        if isinstance(part, dict) and name not in part:
            out[section] = {**part, name: allowed[0]}
    return out


def _value(preset: Any, key: str) -> Any:
    for part in key.split("."):
        preset = getattr(preset, part)
    return preset


def _show(value: Any) -> str:
    """A value as the preset would spell it (true, 4, [console, wandb])."""
    import json

    return json.dumps(value, default=str).replace('"', "")


def _default(preset: Any, key: str) -> Any:
    """The schema's default of `key`, read from the preset's own model class (this module sits below schema.py)."""
    model: Any = type(preset)
    *sections, name = key.split(".")
    for section in sections:
        model = model.model_fields[section].annotation
    return model.model_fields[name].get_default(call_default_factory=True)


def problems(preset: Any) -> list[tuple[str, str, str]]:
    """(key, message, hint) for every key the preset's engine does not support."""
    engine = preset.trainer.engine
    support = ENGINES[engine]
    found = []
    for key, allowed in support.allowed().items():
        value = _value(preset, key)
        if value not in allowed:
            found.append((key, f"{key}: {_show(value)} is not supported by the {engine} engine",
                          f"use {' or '.join(map(str, allowed))} with trainer.engine: {engine}"))
    for key, why in support.ignored.items():
        value = _value(preset, key)
        if value != _default(preset, key):
            found.append((key, f"{key}: {_show(value)} is set but the {engine} engine ignores it", why))
    for key, items in support.items.items():
        for item in _value(preset, key):
            if item not in items:
                found.append((key, f"{key}: {item} is not supported by the {engine} engine",
                               f"the {engine} engine writes {', '.join(items)} (docs/trackers.md)"))
    return found


def check(preset: Any, where: Any = None) -> None:
    """ConfigError naming the first unsupported key (and how many more); `where(key)` gives its file:line."""
    found = problems(preset)
    if not found:
        return
    key, message, hint = found[0]
    origin = where(key) if where is not None else None
    more = f" (and {len(found) - 1} more: {', '.join(k for k, _, _ in found[1:4])})" if len(found) > 1 else ""
    remove = f"; or remove {key}" if key not in ENGINES[preset.trainer.engine].values else ""
    raise ConfigError(f"{origin + ': ' if origin else ''}{message}{more}", f"{hint}{remove}")


def retarget(raw: dict[str, Any], preset: Any, engine: str) -> tuple[dict[str, Any], list[str]]:
    """The raw preset mapping `raw` (whose loaded form is `preset`) set to run on `engine`: the engine switched, the
    keys with per-engine values (actor.strategy, rollout.name) set to `engine`'s default, and the keys `engine`
    ignores removed (they fall back to the schema default). Returns the new mapping and one line per change, so
    the same task runs on the other engine with nothing else touched (the native engine is the reference)."""
    support = ENGINES[engine]
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in raw.items()}
    out["trainer"] = {**out.get("trainer", {}), "engine": engine}
    changes = [f"trainer.engine {preset.trainer.engine} -> {engine}"]
    for key, allowed in support.allowed().items():
        section, name = key.split(".")
        if _value(preset, key) not in allowed:
            out[section] = {**out.get(section, {}), name: allowed[0]}
            changes.append(f"{key} {_show(_value(preset, key))} -> {_show(allowed[0])}")
    for key in support.ignored:
        if _value(preset, key) != _default(preset, key):
            section, name = key.split(".")
            out.get(section, {}).pop(name, None)
            changes.append(f"{key} {_show(_value(preset, key))} dropped ({engine} default)")
    return out, changes

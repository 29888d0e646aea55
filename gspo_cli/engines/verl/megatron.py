"""The Megatron route's overrides (`actor.strategy: megatron`): verl 0.9.1's Megatron actor and reference model.

verl 0.9.1 spells the route `model_engine=megatron`, a Hydra defaults-group choice on `ppo_trainer.yaml`
(`ppo_megatron_trainer.yaml` is a deprecated shim that makes the same choice): it selects
`actor/megatron_actor.yaml` and `ref/megatron_ref.yaml`, whose `megatron` node is `engine/megatron.yaml` and whose
optimizer is `optim/megatron.yaml`. The FSDP-only keys (`fsdp_config.*`, `ulysses_sequence_parallel_size`,
`use_torch_compile`, `entropy_checkpointing`) are not set: those nodes do not exist on this route, and
config/megatron.py refuses them in a preset.

- parallel sizes: `megatron.{tensor,pipeline,expert}_model_parallel_size`, `expert_tensor_parallel_size`;
- offload: `megatron.param_offload` (which in 0.9.1 also releases the gradient buffers: the `grad_offload` key of
  older scripts is gone) and `megatron.optimizer_offload`;
- weights: `megatron.use_mbridge`, `megatron.vanilla_mbridge`; dtype: `megatron.dtype` from model.dtype;
- `megatron.override_transformer_config.*`: added with '+' where verl's default has no such key (Hydra refuses a
  plain override of a missing key in struct mode), set plainly where it has one;
- routing replay: `megatron.router_replay.mode` (R3 also turns on `rollout.enable_rollout_routing_replay`, which
  makes vLLM return the routed experts: verl/workers/rollout/vllm_rollout/vllm_async_server.py:437);
- the reference model mirrors the actor's layout and param offload, as upstream's nightly sets it (the ref's own
  defaults interpolate most of them from the actor, engine ref/megatron_ref.yaml, so the values agree either way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.config.megatron import VERL_TRANSFORMER_KEYS
from gspo_cli.engines.verl import actor_keys

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.verl.overrides import Table

A = "actor_rollout_ref.actor"
REF = "actor_rollout_ref.ref"
R = "actor_rollout_ref.rollout"
DTYPES = {"bfloat16": "bfloat16", "float16": "float16"}  # engine/megatron.yaml: dtype ["bfloat16", "float16"]


def _layout(t: Table, prefix: str, p: Preset) -> None:
    """Parallel sizes, param offload and weight loading, on the actor or the reference model."""
    m, o = p.actor.megatron, "actor.megatron."
    t.put(f"{prefix}.megatron.tensor_model_parallel_size", m.tensor_model_parallel_size,
          o + "tensor_model_parallel_size")
    t.put(f"{prefix}.megatron.pipeline_model_parallel_size", m.pipeline_model_parallel_size,
          o + "pipeline_model_parallel_size")
    t.put(f"{prefix}.megatron.expert_model_parallel_size", m.expert_model_parallel_size,
          o + "expert_model_parallel_size")
    t.put(f"{prefix}.megatron.expert_tensor_parallel_size", m.expert_tensor_parallel_size,
          o + "expert_tensor_parallel_size")
    t.put(f"{prefix}.megatron.param_offload", p.actor.param_offload, "actor.param_offload")
    t.put(f"{prefix}.megatron.use_mbridge", m.use_mbridge, o + "use_mbridge")
    t.put(f"{prefix}.megatron.vanilla_mbridge", m.vanilla_mbridge, o + "vanilla_mbridge")


def _transformer(t: Table, p: Preset) -> None:
    items = p.actor.megatron.override_transformer_config.model_dump(exclude_none=True)
    for key, value in items.items():
        t.put(f"{A}.megatron.override_transformer_config.{key}", value,
              f"actor.megatron.override_transformer_config.{key}", add=key not in VERL_TRANSFORMER_KEYS)


def actor(t: Table, p: Preset) -> None:
    """The Megatron actor (the loss keys are the shared ones, compile._actor_loss)."""
    a = p.actor
    t.put("model_engine", "megatron", "actor.strategy")
    t.put(f"{A}.strategy", "megatron", "actor.strategy")
    actor_keys.optim(t, p)
    actor_keys.batching(t, p)
    _layout(t, A, p)
    t.put(f"{A}.megatron.optimizer_offload", a.optimizer_offload, "actor.optimizer_offload")
    t.put(f"{A}.megatron.dtype", DTYPES[p.model.dtype], "model.dtype")
    t.put(f"{A}.entropy_from_logits_with_chunking", a.entropy_from_logits_with_chunking,
          "actor.entropy_from_logits_with_chunking")
    _transformer(t, p)
    rr = a.megatron.router_replay
    t.put(f"{A}.megatron.router_replay.mode", rr, "actor.megatron.router_replay")
    if rr == "R3":
        t.put(f"{R}.enable_rollout_routing_replay", True, "actor.megatron.router_replay")
    t.put(f"{A}.checkpoint.save_contents", ["model", "optimizer", "extra"], "derived: resumable checkpoints")


def ref(t: Table, p: Preset) -> None:
    """The reference model (used only with a KL term): the actor's layout, forward only."""
    _layout(t, REF, p)
    if p.actor.use_dynamic_bsz:
        t.put(f"{REF}.log_prob_use_dynamic_bsz", True, "actor.use_dynamic_bsz")
    if p.rollout.log_prob_max_token_len_per_device is not None:
        t.put(f"{REF}.log_prob_max_token_len_per_gpu", p.rollout.log_prob_max_token_len_per_device,
              "rollout.log_prob_max_token_len_per_device")

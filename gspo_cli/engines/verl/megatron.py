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

from gspo_cli.config.megatron import VERL_TRANSFORMER_KEYS
from gspo_cli.engines.verl import actor_keys
from gspo_cli.engines.verl.overrides import Entry, Row, Section, always, copies, is_set

A = "actor_rollout_ref.actor"
REF = "actor_rollout_ref.ref"
R = "actor_rollout_ref.rollout"
DTYPES = {"bfloat16": "bfloat16", "float16": "float16"}  # engine/megatron.yaml: dtype ["bfloat16", "float16"]
M = "actor.megatron"


def _r3(mode: str | None) -> bool:
    return mode == "R3"


def _layout(prefix: str) -> tuple[Row, ...]:
    """Parallel sizes, param offload and weight loading, on the actor or the reference model."""
    return (
        *copies(f"{prefix}.megatron", M, "tensor_model_parallel_size", "pipeline_model_parallel_size",
                "expert_model_parallel_size", "expert_tensor_parallel_size"),
        Row(f"{prefix}.megatron.param_offload", "actor.param_offload"),
        *copies(f"{prefix}.megatron", M, "use_mbridge", "vanilla_mbridge"),
    )


# The Megatron actor (the loss keys are the shared ones, compile.LOSS); `actor.strategy` is `megatron` here.
ACTOR: tuple[Entry, ...] = (
    Row("model_engine", "actor.strategy"),
    Row(f"{A}.strategy", "actor.strategy"),
    *actor_keys.OPTIM,
    *actor_keys.BATCHING,
    *_layout(A),
    Row(f"{A}.megatron.optimizer_offload", "actor.optimizer_offload"),
    Row(f"{A}.megatron.dtype", "model.dtype", via=DTYPES.__getitem__),
    Row(f"{A}.entropy_from_logits_with_chunking", "actor.entropy_from_logits_with_chunking"),
    Section(f"{A}.megatron.override_transformer_config", f"{M}.override_transformer_config",
            lambda section: section.model_dump(exclude_none=True), added=lambda key: key not in VERL_TRANSFORMER_KEYS),
    Row(f"{A}.megatron.router_replay.mode", f"{M}.router_replay"),
    Row(f"{R}.enable_rollout_routing_replay", f"{M}.router_replay", via=always(True), when=_r3),
    actor_keys.CHECKPOINT,
)

# The reference model (used only with a KL term): the actor's layout, forward only.
REFERENCE: tuple[Entry, ...] = (
    *_layout(REF),
    Row(f"{REF}.log_prob_use_dynamic_bsz", "actor.use_dynamic_bsz", when=bool),
    Row(f"{REF}.log_prob_max_token_len_per_gpu", "rollout.log_prob_max_token_len_per_device", when=is_set),
)

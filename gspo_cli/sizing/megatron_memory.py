"""Device and host memory of one verl 0.9.1 GSPO step on the Megatron route (`actor.strategy: megatron`), phase by
phase: the same four phases as memory.py (rollout, update_weights, old_log_prob, update), with Megatron's sharding.

How Megatron shards the actor's state, unlike FSDP2 (which splits every parameter over the whole world):

- weights: a dense (non-expert) parameter is split over TP x PP and *replicated* over the data-parallel group
  DP = world / (TP x PP); an expert parameter is split over EP x ETP x PP and replicated over the expert
  data-parallel group EDP = world / (EP x ETP x PP). Per rank: dense / (TP x PP) + experts / (EP x ETP x PP),
  i.e. the *total* parameter count divided by the model-parallel sizes, not by the world (the activated count only
  sets the compute per token).
- bf16 weights (2 B, engine/megatron.yaml dtype) and an fp32 gradient buffer (4 B: verl sets Megatron DDP's
  grad_reduce_in_fp32 unless the precision-aware optimizer asks for low-precision grads,
  workers/engine/megatron/transformer_impl.py:455-460) on every rank for its shard;
- the distributed optimizer (engine/megatron.yaml use_distributed_optimizer: true, the default) keeps fp32 main
  weights and AdamW's two moments (12 B) once per DP group: dense / (TP x PP x DP) + experts / (EP x ETP x PP x EDP)
  = (dense + experts) / world per rank.
- offload: `param_offload` moves the bf16 weights and releases the gradient buffers between phases (there is no
  grad_offload key in 0.9.1), `optimizer_offload` the 12 B; the update loads all of them back.
- activations: sequence parallelism (engine/megatron.yaml sequence_parallel: true) splits a micro-batch's tokens
  over TP outside attention, and the output layer is vocab-parallel, so a rank holds tokens x vocab / TP logits;
  full recompute (override_transformer_config recompute_granularity full) keeps only each layer's input.

Tokens per micro-batch: `ppo_max_token_len_per_device` with dynamic batch size (the bound; a GSM8K step uses far
fewer), else micro-batch x (prompt + response). An estimate of the worst micro-batch, not a profiler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.sizing import memory
from gspo_cli.sizing.memory import MemoryEstimate, Phase
from gspo_cli.sizing.model_facts import MiB, ModelFacts

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


def rank_params(preset: Preset, m: ModelFacts) -> dict[str, float]:
    """Parameters one rank holds (`weights`) and the optimizer's share (`optimizer`), with the group sizes."""
    mg, world = preset.actor.megatron, preset.cluster.world_size
    experts = m.moe_layers * m.num_experts * m.expert_params if m.is_moe else 0
    dense = m.params - experts
    weights = dense / mg.model_parallel + experts / mg.expert_parallel
    dp = max(1, world // mg.model_parallel)
    edp = max(1, world // mg.expert_parallel)
    optimizer = dense / (mg.model_parallel * dp) + experts / (mg.expert_parallel * edp)
    return {"weights": weights, "optimizer": optimizer, "dense": dense, "experts": experts, "dp": dp, "edp": edp}


def _micro(preset: Preset, m: ModelFacts, tokens: int, *, backward: bool, entropy: bool) -> dict[str, int]:
    """One micro-batch's working memory on a rank (bytes): see the module docstring."""
    mg, tp = preset.actor.megatron, preset.actor.megatron.tensor_model_parallel_size
    local = -(-tokens // tp)  # sequence parallel: a rank's share of the tokens outside attention
    logits = tokens * -(-m.vocab_size // tp) * 2  # vocab-parallel output layer, bf16
    kv_width = 2 * m.num_key_value_heads * m.head_dim
    parts = {"layer_activations": local * (2 * m.hidden_size + kv_width + memory.mlp_activation_width(m)) * 2,
             "logits_bf16": logits,
             "entropy_fp32": 2 * logits if entropy else 0}
    if backward:
        full = mg.override_transformer_config.recompute_granularity == "full"
        per_layer = m.hidden_size * 2 * (1 if full else 16)
        parts["checkpointed_activations"] = local * per_layer * -(-m.num_hidden_layers // mg.pipeline_model_parallel_size)
        parts["logits_grad_bf16"] = logits
    return {k: v for k, v in parts.items() if v}


def estimate(preset: Preset, m: ModelFacts, device_bytes: int | None) -> MemoryEstimate:
    """The four phases of one Megatron-route step on one device and on the host."""
    a, r = preset.actor, preset.rollout
    shard = rank_params(preset, m)
    weights, grads, optim = int(2 * shard["weights"]), int(4 * shard["weights"]), int(12 * shard["optimizer"])
    resident = {"weights_bf16": 0 if a.param_offload else weights,
                "grad_buffer_fp32": 0 if a.param_offload else grads,
                "optimizer_fp32_adamw": 0 if a.optimizer_offload else optim}
    offloaded = {"weights_bf16": weights if a.param_offload else 0,
                 "grad_buffer_fp32": grads if a.param_offload else 0,
                 "optimizer_fp32_adamw": optim if a.optimizer_offload else 0}
    vllm_weights = int(2 * memory.rollout_weight_params(m, r.tensor_parallel_size, r.expert_parallel_size))
    level = memory.vllm_sleep_level(preset)
    budget = int(r.gpu_memory_utilization * device_bytes) if device_bytes else vllm_weights
    host = memory._host_parts  # noqa: SLF001 - the same host rule as the FSDP route
    phases = {
        "rollout": Phase("rollout", {"vllm_budget": budget, **resident},
                         "vLLM's gpu_memory_utilization share + the actor state not offloaded",
                         host(preset, offloaded, vllm_weights, False, level)),
        "update_weights": Phase("update_weights", {
            "vllm_weights": vllm_weights, "weight_sync_bucket": r.update_weights_bucket_megabytes * MiB,
            "gathered_tensor_bf16": 2 * memory.largest_tensor_params(m), "weights_bf16": weights,
            **{k: v for k, v in resident.items() if k != "weights_bf16"}},
            "mbridge exports the bf16 shards as HF tensors, one gathered tensor at a time, through the bucket",
            host(preset, {k: v for k, v in offloaded.items() if k != "weights_bf16"}, vllm_weights, False, level)),
        "old_log_prob": Phase("old_log_prob", {
            "weights_bf16": weights, "optimizer_fp32_adamw": resident["optimizer_fp32_adamw"],
            **_micro(preset, m, memory.micro_tokens(preset, "old_log_prob"), backward=False, entropy=True)},
            "bf16 weights loaded for the forward; vLLM asleep",
            host(preset, {"optimizer_fp32_adamw": offloaded["optimizer_fp32_adamw"]}, vllm_weights, True, level)),
        "update": Phase("update", {
            "weights_bf16": weights, "grad_buffer_fp32": grads, "optimizer_fp32_adamw": optim,
            **_micro(preset, m, memory.micro_tokens(preset, "update"), backward=True,
                     entropy=preset.algorithm.entropy_coeff != 0)},
            "weights, fp32 grad buffer and the distributed optimizer's shard loaded for the update",
            host(preset, {}, vllm_weights, True, level)),
    }
    rollout = memory._rollout_figures(preset, m, device_bytes)  # noqa: SLF001 - vLLM is the same on both routes
    rollout.update(megatron_dp=shard["dp"], megatron_expert_dp=shard["edp"],
                   megatron_params_per_rank=int(shard["weights"]))
    return MemoryEstimate(params=m.params, world=preset.cluster.world_size, phases=phases, rollout=rollout,
                          device_bytes=device_bytes, sleep_level=level)

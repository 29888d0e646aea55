"""Per-device memory of one verl 0.9.1 GSPO step, phase by phase, the way verl places things.

verl colocates the FSDP actor and the vLLM rollout on every device and runs a step in three phases:

1. `rollout`: vLLM generates. It claims `gpu_memory_utilization x device` (weights / TP, KV cache, its own
   activations). Weight sync streams the actor's shards through one bucket of `update_weights_bucket_megabytes`.
   The actor's state stays where offload left it: on the host with `param_offload` / `optimizer_offload`,
   otherwise resident (fp32 params 4 B and AdamW 8 B per parameter / world; gradients are freed, because the
   train context's exit calls `optimizer.zero_grad()`, which sets them to None).
2. `old_log_prob`: the actor's forward pass over the rollout. verl's eval context loads only the parameters
   (`BaseEngineCtx._context_switch`: `model=param_offload, optimizer=False, grad=False`,
   verl/workers/engine/base.py). vLLM sleeps (`free_cache_engine`, vllm_async_server.sleep) and frees its memory.
3. `update`: the train context loads parameters, gradients and AdamW state onto the device for the phase
   (`model=param_offload, optimizer=optimizer_offload, grad=param_offload`), so all 16 B per parameter / world
   are on the device during the update whatever the offload flags: offload means "on the host between phases,
   on the device during its phase".

Per micro-batch, both actor phases also hold: the bf16 all-gather of one FSDP unit (two with forward prefetch;
the update also holds its unsharded gradient), one decoder layer's working activations, and the full-vocab bf16
logits of the micro-batch's tokens on this rank (verl's `_forward_micro_batch` materialises `output.logits`
before `entropy_from_logits_with_chunking` walks it in fp32 chunks of 2048 rows), plus the fp32 entropy chunk.
The update also keeps the checkpointed layer inputs and the logits' gradient.

Tokens per rank and micro-batch: `ppo_max_token_len_per_gpu` (update) / `log_prob_max_token_len_per_gpu`
(old_log_prob) with dynamic batch size (verl packs `max_token_len x SP` tokens and splits them over the Ulysses
group), else micro-batch x ceil(seq / SP). Estimates, not a profiler: they catch a config that cannot fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gspo_cli.engines.verl.model_facts import GiB, MiB, ModelFacts

PHASES = ("rollout", "old_log_prob", "update")
ENTROPY_CHUNK = 2048  # verl's entropy_from_logits_chunk_size default
RUNTIME_RESERVE = 1 * GiB  # what vLLM's budget leaves for its activations and graphs before the KV cache


@dataclass(frozen=True)
class Phase:
    name: str
    parts: dict[str, int]
    where: str  # one line: what is on the device in this phase and why

    @property
    def total(self) -> int:
        return sum(self.parts.values())


@dataclass
class MemoryEstimate:
    params: int
    world: int
    phases: dict[str, Phase]
    host_offload_bytes_per_node: int
    rollout: dict[str, Any] = field(default_factory=dict)  # vLLM: weights / TP, KV cache figures
    device_bytes: int | None = None

    @property
    def peak(self) -> Phase:
        """The largest phase (the first of equals in step order)."""
        return max(self.phases.values(), key=lambda p: p.total)

    def to_json(self) -> dict[str, Any]:
        update = self.phases["update"]
        return {
            "params": self.params,
            "phases": {n: {"total_bytes": p.total, "parts": dict(p.parts), "where": p.where}
                       for n, p in self.phases.items()},
            "peak_phase": self.peak.name,
            "peak_bytes": self.peak.total,
            # Kept for scripts that read the single actor figure: the update phase, the actor's largest.
            "actor_total_bytes": update.total,
            "actor_bytes": dict(update.parts),
            "host_offload_bytes_per_node": self.host_offload_bytes_per_node,
            "device_bytes": self.device_bytes,
            **self.rollout,
        }


def micro_tokens(preset, phase: str) -> int:
    """Tokens one rank holds in one micro-batch of `phase` (update or old_log_prob)."""
    a, r, d = preset.actor, preset.rollout, preset.data
    sp = a.ulysses_sequence_parallel_size
    if a.use_dynamic_bsz and a.ppo_max_token_len_per_device:
        if phase == "old_log_prob" and r.log_prob_max_token_len_per_device:
            return r.log_prob_max_token_len_per_device
        return a.ppo_max_token_len_per_device  # verl's default for log_prob_max_token_len_per_gpu too
    seq = d.max_prompt_length + d.max_response_length
    return (a.ppo_micro_batch_size_per_device or 1) * -(-seq // sp)


def _per_micro_batch(preset, m: ModelFacts, tokens: int, *, backward: bool) -> dict[str, int]:
    """What one micro-batch adds on top of the sharded state (bytes)."""
    a = preset.actor
    gathered = 2 * m.layer_params * (2 if a.forward_prefetch else 1)
    kv_width = 2 * m.num_key_value_heads * m.head_dim
    working = tokens * (2 * m.hidden_size + kv_width + 3 * m.intermediate_size) * 2
    logits = tokens * m.vocab_size * 2
    if a.entropy_from_logits_with_chunking:
        entropy = 3 * min(tokens, ENTROPY_CHUNK) * m.vocab_size * 4  # fp32 chunk, its softmax, their product
    else:
        entropy = 2 * tokens * m.vocab_size * 2  # softmax and product over the whole bf16 tensor
    parts = {"gathered_layers_bf16": gathered, "layer_activations": working, "logits_bf16": logits,
             "entropy_fp32": entropy}
    if backward:
        per_token_layer = m.hidden_size * 2 * (1 if preset.model.enable_gradient_checkpointing else 16)
        parts["gathered_grads_bf16"] = gathered
        parts["checkpointed_activations"] = tokens * per_token_layer * m.num_hidden_layers
        parts["logits_grad_bf16"] = logits
    return parts


def _rollout_figures(preset, m: ModelFacts, device_bytes: int | None) -> dict[str, Any]:
    r, d = preset.rollout, preset.data
    tp = r.tensor_parallel_size
    weights_tp = 2 * m.params / tp
    kv_token = 2 * m.num_hidden_layers * max(1, m.num_key_value_heads // tp) * m.head_dim * 2
    out: dict[str, Any] = {"rollout_weights_bytes": int(weights_tp), "kv_bytes_per_token": int(kv_token)}
    if device_bytes:
        kv_bytes = max(0, r.gpu_memory_utilization * device_bytes - weights_tp - RUNTIME_RESERVE)
        seq = d.max_prompt_length + d.max_response_length
        out.update(kv_cache_bytes=int(kv_bytes), kv_cache_tokens=int(kv_bytes // kv_token),
                   full_length_seqs=int(kv_bytes // kv_token // seq))
    return out


def estimate(preset, m: ModelFacts, device_bytes: int | None) -> MemoryEstimate:
    """The three phases of one step on one device (see the module docstring for where each figure comes from)."""
    a, r = preset.actor, preset.rollout
    world = preset.cluster.world_size
    shard = m.params / world
    params, grads, adamw = int(4 * shard), int(4 * shard), int(8 * shard)
    resident = {"params_fp32": 0 if a.param_offload else params, "optimizer_adamw": 0 if a.optimizer_offload else adamw}
    rollout_parts = {"vllm_budget": int(r.gpu_memory_utilization * device_bytes) if device_bytes else 0,
                     "weight_sync_bucket": r.update_weights_bucket_megabytes * MiB, **resident}
    if not device_bytes:  # no device size: the budget is unknown, count the weights vLLM must hold at least
        rollout_parts["vllm_budget"] = int(2 * m.params / r.tensor_parallel_size)
    old = {"params_fp32": params, "optimizer_adamw": resident["optimizer_adamw"],
           **_per_micro_batch(preset, m, micro_tokens(preset, "old_log_prob"), backward=False)}
    update = {"params_fp32": params, "grads_fp32": grads, "optimizer_adamw": adamw,
              **_per_micro_batch(preset, m, micro_tokens(preset, "update"), backward=True)}
    phases = {
        "rollout": Phase("rollout", rollout_parts, "vLLM's gpu_memory_utilization share + weight-sync bucket"
                         + ("" if a.param_offload and a.optimizer_offload else " + actor state not offloaded")),
        "old_log_prob": Phase("old_log_prob", old, "params loaded for the forward; vLLM asleep"),
        "update": Phase("update", update, "params, grads and AdamW loaded for the update"
                        + (" (offloaded between phases)" if a.param_offload or a.optimizer_offload else "")),
    }
    host = (params + grads if a.param_offload else 0) + (adamw if a.optimizer_offload else 0)
    return MemoryEstimate(params=m.params, world=world, phases=phases,
                          host_offload_bytes_per_node=host * preset.cluster.devices_per_node,
                          rollout=_rollout_figures(preset, m, device_bytes), device_bytes=device_bytes)


def gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


def phase_line(phase: Phase) -> str:
    """`update 15.2 GiB (params_fp32 2.0, grads_fp32 2.0, ...)`: the parts over 0.05 GiB, largest first."""
    big = sorted(((k, v) for k, v in phase.parts.items() if v >= 0.05 * GiB), key=lambda kv: -kv[1])
    return f"{phase.name} {gib(phase.total)} (" + ", ".join(f"{k} {v / GiB:.1f}" for k, v in big) + ")"

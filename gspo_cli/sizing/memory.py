"""Device and host memory of one verl 0.9.1 GSPO step, phase by phase, the way verl places things.

Every term cites the verl 0.9.1 line that puts it there (paths under `verl/`). verl colocates the FSDP2 actor and
the vLLM rollout on every device; one step runs four phases:

1. `rollout`: vLLM generates. It claims `gpu_memory_utilization x device` (weights / TP, KV cache, activations).
   The actor's state is where offload left it: on the host with `param_offload` / `optimizer_offload`, else on the
   device (fp32 params 4 B and AdamW 8 B per parameter / world). Gradients are gone: the train context's exit
   calls `optimizer.zero_grad()` (workers/engine/fsdp/transformer_impl.py:1138), which frees them.
2. `update_weights`: the sync from the actor into vLLM (workers/engine_workers.py:768-823): vLLM's weights are
   resumed first (the KV cache stays released until step 4 of that function), FSDP2 hands over one full tensor at
   a time (`param.to(device).full_tensor()`, fp32, transformer_impl.py:1030; no whole-model staging for FSDP2,
   :989), and they travel through one bucket of `update_weights_bucket_megabytes` on the device when the platform
   supports IPC (workers/rollout/vllm_rollout/bucketed_weight_transfer.py:183; else host shared memory, :191).
   The bucket exists only here, not while vLLM generates.
3. `old_log_prob`: the actor's forward pass. The eval context loads only the parameters
   (workers/engine/base.py:321), vLLM sleeps and frees its device memory; entropy is always computed here
   (`calculate_entropy=True`, trainer/ppo/ray_trainer.py:1300).
4. `update`: the train context loads parameters, gradients and AdamW onto the device
   (workers/engine/base.py:323-327), so all 16 B per parameter / world are there whatever the offload flags.
   Entropy is computed only with `entropy_coeff != 0` or `calculate_entropy` (ray_trainer.py:1336,
   trainer/ppo/v1/trainer_base.py:1831; transformer_impl.py:1397).

Per micro-batch, both actor phases hold one gathered FSDP unit and, with forward prefetch, the next
(utils/fsdp_utils.py:605-613). FSDP2 wraps every decoder layer and, when embeddings are untied, `embed_tokens` and
`lm_head` as units of their own (`_select_fsdp2_wrap_targets`, fsdp_utils.py:558-569); tied embeddings live in the
root unit, which is never resharded after forward (fsdp_utils.py:600). Either way a vocab x hidden unit is the
largest, and its backward holds the bf16 gathered weight plus the fp32 gradient FSDP reduces
(`reduce_dtype` fp32 by default, transformer_impl.py:394/455). Then one decoder layer's working activations, the
micro-batch's full-vocab bf16 logits (`_forward_micro_batch` materialises them) and, when entropy is computed, the
fp32 entropy chunk of 2048 rows. The update also keeps the checkpointed layer inputs and the logits' gradient.

Host memory per node: offloaded fp32 params and AdamW between the phases that use them, and vLLM's weights while
it sleeps at level 1, which keeps them in host RAM: verl uses level 1 on Ascend (third_party/vllm/__init__.py:41-43,
vllm_async_server.py:1303) and level 2 (weights discarded) on CUDA with vLLM >= 0.18 (__init__.py:46-48).

Tokens per rank and micro-batch: `ppo_max_token_len_per_device` (update) / `log_prob_max_token_len_per_device`
(old_log_prob) with dynamic batch size, else micro-batch x ceil(seq / SP). Estimates, not a profiler.

Mixture-of-Experts (model_facts.ModelFacts.is_moe): FSDP2 shards every parameter, experts included, over the world
(16 B per parameter of the *total* count in the update); the largest FSDP unit is then an MoE decoder layer (all its
experts); a token's MLP activations are its `num_experts_per_tok` experts' SwiGLUs, the hidden state copied to each
of them and the router's logits. transformers 5 keeps all experts of a layer as one 3-D parameter (`gate_up_proj`
[E, 2 x moe_intermediate, hidden], modeling_qwen3_moe.py `Qwen3MoeExperts`), which is then the largest full tensor
the weight sync hands over. vLLM's rollout weights per rank: with `rollout.expert_parallel_size` > 1 the experts are
split over the EP group (whole experts per rank) and the rest over TP; otherwise everything over TP (each expert
tensor-parallel). The KV cache is attention's, the same for dense and MoE.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gspo_cli.sizing.model_facts import GiB, MiB, ModelFacts

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

PHASES = ("rollout", "update_weights", "old_log_prob", "update")
ENTROPY_CHUNK = 2048  # verl's entropy_from_logits_chunk_size default
RUNTIME_RESERVE = 1 * GiB  # what vLLM's budget leaves for its activations and graphs before the KV cache


def largest_tensor_params(m: ModelFacts) -> int:
    """The largest single tensor of the model: the (untied or tied) embedding, or a layer's fused experts."""
    experts = m.num_experts * 2 * m.moe_intermediate_size * m.hidden_size if m.is_moe else 0
    return max(m.vocab_size * m.hidden_size, experts)


def mlp_activation_width(m: ModelFacts) -> int:
    """Activation values per token of one decoder layer's MLP (the widest layer kind): dense SwiGLU 3 x intermediate;
    MoE: top-k experts' SwiGLUs, the token's hidden state copied to each chosen expert, the router logits."""
    dense = 3 * m.intermediate_size if m.moe_layers < m.num_hidden_layers else 0
    if not m.is_moe:
        return dense
    k = m.num_experts_per_tok
    return max(dense, k * 3 * m.moe_intermediate_size + k * m.hidden_size + m.num_experts)


def rollout_weight_params(m: ModelFacts, tp: int, ep: int = 1) -> float:
    """vLLM's weights on one rank: with expert parallelism (ep > 1) the experts over EP and the rest over TP, else
    everything over TP."""
    if m.is_moe and ep > 1:
        experts = m.moe_layers * m.num_experts * m.expert_params
        return experts / ep + (m.params - experts) / tp
    return m.params / tp


@dataclass(frozen=True)
class Phase:
    name: str
    parts: dict[str, int]
    where: str  # one line: what is on the device in this phase and why
    host_parts: dict[str, int] = field(default_factory=dict)  # per node

    @property
    def total(self) -> int:
        return sum(self.parts.values())

    @property
    def host_total(self) -> int:
        return sum(self.host_parts.values())


@dataclass
class MemoryEstimate:
    params: int
    world: int
    phases: dict[str, Phase]
    rollout: dict[str, Any] = field(default_factory=dict)  # vLLM: weights / TP, KV cache figures
    device_bytes: int | None = None
    sleep_level: int = 2

    @property
    def peak(self) -> Phase:
        """The largest phase on the device (the first of equals in step order)."""
        return max(self.phases.values(), key=lambda p: p.total)

    @property
    def host_peak(self) -> Phase:
        """The phase with the most host memory per node."""
        return max(self.phases.values(), key=lambda p: p.host_total)

    @property
    def host_offload_bytes_per_node(self) -> int:
        return self.host_peak.host_total

    def to_json(self) -> dict[str, Any]:
        update = self.phases["update"]
        return {
            "params": self.params,
            "phases": {n: {"total_bytes": p.total, "parts": dict(p.parts), "where": p.where,
                           "host_bytes_per_node": p.host_total, "host_parts": dict(p.host_parts)}
                       for n, p in self.phases.items()},
            "peak_phase": self.peak.name,
            "peak_bytes": self.peak.total,
            # Kept for scripts that read the single actor figure: the update phase, the actor's largest.
            "actor_total_bytes": update.total,
            "actor_bytes": dict(update.parts),
            "host_peak_phase": self.host_peak.name,
            "host_offload_bytes_per_node": self.host_offload_bytes_per_node,
            "vllm_sleep_level": self.sleep_level,
            "device_bytes": self.device_bytes,
            **self.rollout,
        }


def micro_tokens(preset: Preset, phase: str) -> int:
    """Tokens one rank holds in one micro-batch of `phase` (update or old_log_prob)."""
    a, r, d = preset.actor, preset.rollout, preset.data
    sp = a.ulysses_sequence_parallel_size
    if a.use_dynamic_bsz and a.ppo_max_token_len_per_device:
        if phase == "old_log_prob" and r.log_prob_max_token_len_per_device:
            return r.log_prob_max_token_len_per_device
        return a.ppo_max_token_len_per_device  # verl's default for log_prob_max_token_len_per_gpu too
    seq = d.max_prompt_length + d.max_response_length
    return (a.ppo_micro_batch_size_per_device or 1) * -(-seq // sp)


def vllm_sleep_level(preset: Preset) -> int:
    """1 on Ascend (weights kept in host RAM while vLLM sleeps), 2 elsewhere (third_party/vllm/__init__.py:41-48):
    an Ascend `cluster.device` (the device table's `ascend`; `auto` is not resolved here) or an A2 / A3 profile."""
    from gspo_cli.config import devices

    named = preset.cluster.device
    ascend = not devices.is_auto(named) and devices.get(named).ascend
    return 1 if ascend or (preset.cluster.profile or "").startswith(("a2", "a3")) else 2


def _entropy_bytes(preset: Preset, m: ModelFacts, tokens: int) -> int:
    if preset.actor.entropy_from_logits_with_chunking:
        return 3 * min(tokens, ENTROPY_CHUNK) * m.vocab_size * 4  # fp32 chunk, its softmax, their product
    return 2 * tokens * m.vocab_size * 2  # softmax and product over the whole bf16 tensor


def _per_micro_batch(preset: Preset, m: ModelFacts, tokens: int, *, backward: bool, entropy: bool) -> dict[str, int]:
    """What one micro-batch adds on top of the sharded state (bytes)."""
    a = preset.actor
    vocab_unit = m.vocab_size * m.hidden_size  # lm_head / embed_tokens unit, or the tied root unit
    unit = max(vocab_unit, m.layer_params)
    kv_width = 2 * m.num_key_value_heads * m.head_dim
    logits = tokens * m.vocab_size * 2
    parts = {"gathered_unit_bf16": 2 * unit,
             "prefetched_layer_bf16": 2 * m.layer_params if a.forward_prefetch else 0,
             "layer_activations": tokens * (2 * m.hidden_size + kv_width + mlp_activation_width(m)) * 2,
             "logits_bf16": logits,
             "entropy_fp32": _entropy_bytes(preset, m, tokens) if entropy else 0}
    if backward:
        per_token_layer = m.hidden_size * 2 * (1 if preset.model.enable_gradient_checkpointing else 16)
        parts["unit_grad_fp32_reduce"] = 4 * unit
        parts["checkpointed_activations"] = tokens * per_token_layer * m.num_hidden_layers
        parts["logits_grad_bf16"] = logits
    return {k: v for k, v in parts.items() if v}


def _rollout_figures(preset: Preset, m: ModelFacts, device_bytes: int | None) -> dict[str, Any]:
    r, d = preset.rollout, preset.data
    tp = r.tensor_parallel_size
    weights_tp = 2 * rollout_weight_params(m, tp, r.expert_parallel_size)
    kv_token = 2 * m.num_hidden_layers * max(1, m.num_key_value_heads // tp) * m.head_dim * 2
    out: dict[str, Any] = {"rollout_weights_bytes": int(weights_tp), "kv_bytes_per_token": int(kv_token)}
    if m.is_moe:
        out.update(total_params=m.params, activated_params=m.active_params, moe_layers=m.moe_layers,
                   experts=m.num_experts, experts_per_token=m.num_experts_per_tok, router_params=m.router_params,
                   rollout_expert_parallel_size=r.expert_parallel_size,
                   experts_per_rank=m.num_experts / r.expert_parallel_size if r.expert_parallel_size > 1 else None)
    if device_bytes:
        kv_bytes = max(0, r.gpu_memory_utilization * device_bytes - weights_tp - RUNTIME_RESERVE)
        seq = d.max_prompt_length + d.max_response_length
        out.update(kv_cache_bytes=int(kv_bytes), kv_cache_tokens=int(kv_bytes // kv_token),
                   full_length_seqs=int(kv_bytes // kv_token // seq))
    return out


def _host_parts(preset: Preset, offloaded: dict[str, int], vllm_weights: int, sleeping: bool, level: int
                ) -> dict[str, int]:
    """Host memory per node: this phase's offloaded actor state, and vLLM's weights if asleep at level 1."""
    ranks = preset.cluster.devices_per_node
    parts = {k: v * ranks for k, v in offloaded.items() if v}
    if sleeping and level == 1:
        parts["vllm_weights_asleep_level1"] = vllm_weights * ranks
    return parts


def estimate(preset: Preset, m: ModelFacts, device_bytes: int | None) -> MemoryEstimate:
    """The four phases of one step on one device and on the host (see the module docstring for each term); the
    Megatron route's sharding: megatron_memory.py (which builds on this module; memory_checks.phase_memory picks)."""
    if preset.actor.strategy == "megatron":
        raise ValueError("memory.estimate models FSDP sharding: a Megatron preset's is megatron_memory.estimate")
    a, r = preset.actor, preset.rollout
    world = preset.cluster.world_size
    shard = m.params / world
    params, grads, adamw = int(4 * shard), int(4 * shard), int(8 * shard)
    resident = {"params_fp32": 0 if a.param_offload else params, "optimizer_adamw": 0 if a.optimizer_offload else adamw}
    offloaded = {"params_fp32": params if a.param_offload else 0, "optimizer_adamw": adamw if a.optimizer_offload else 0}
    vllm_weights = int(2 * rollout_weight_params(m, r.tensor_parallel_size, r.expert_parallel_size))
    level = vllm_sleep_level(preset)
    budget = int(r.gpu_memory_utilization * device_bytes) if device_bytes else vllm_weights
    entropy_in_update = preset.algorithm.entropy_coeff != 0
    phases = {
        "rollout": Phase("rollout", {"vllm_budget": budget, **resident},
                         "vLLM's gpu_memory_utilization share" + ("" if a.param_offload and a.optimizer_offload
                                                                  else " + actor state not offloaded"),
                         _host_parts(preset, offloaded, vllm_weights, False, level)),
        "update_weights": Phase("update_weights", {
            "vllm_weights": vllm_weights, "weight_sync_bucket": r.update_weights_bucket_megabytes * MiB,
            "full_tensor_fp32": 4 * largest_tensor_params(m), **resident},
            "vLLM weights resumed, KV cache still released; one full tensor at a time through the bucket",
            _host_parts(preset, offloaded, vllm_weights, False, level)),
        "old_log_prob": Phase("old_log_prob", {
            "params_fp32": params, "optimizer_adamw": resident["optimizer_adamw"],
            **_per_micro_batch(preset, m, micro_tokens(preset, "old_log_prob"), backward=False, entropy=True)},
            "params loaded for the forward; vLLM asleep",
            _host_parts(preset, {"optimizer_adamw": offloaded["optimizer_adamw"]}, vllm_weights, True, level)),
        "update": Phase("update", {
            "params_fp32": params, "grads_fp32": grads, "optimizer_adamw": adamw,
            **_per_micro_batch(preset, m, micro_tokens(preset, "update"), backward=True, entropy=entropy_in_update)},
            "params, grads and AdamW loaded for the update"
            + (" (offloaded between phases)" if a.param_offload or a.optimizer_offload else ""),
            _host_parts(preset, {}, vllm_weights, True, level)),
    }
    return MemoryEstimate(params=m.params, world=world, phases=phases,
                          rollout=_rollout_figures(preset, m, device_bytes), device_bytes=device_bytes,
                          sleep_level=level)


def gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


def phase_line(phase: Phase) -> str:
    """`update 15.2 GiB (params_fp32 2.0, grads_fp32 2.0, ...)`: the parts over 0.05 GiB, largest first."""
    big = sorted(((k, v) for k, v in phase.parts.items() if v >= 0.05 * GiB), key=lambda kv: -kv[1])
    return f"{phase.name} {gib(phase.total)} (" + ", ".join(f"{k} {v / GiB:.1f}" for k, v in big) + ")"


def host_line(est: MemoryEstimate) -> str:
    """`host per node: old_log_prob 305.0 GiB (vllm_weights_asleep_level1 244.1, optimizer_adamw 61.0)`."""
    p = est.host_peak
    big = sorted(((k, v) for k, v in p.host_parts.items() if v >= 0.05 * GiB), key=lambda kv: -kv[1])
    return f"host per node: {p.name} {gib(p.host_total)} (" + ", ".join(f"{k} {v / GiB:.1f}" for k, v in big) + ")"

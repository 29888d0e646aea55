"""Preflight checks of the Megatron route (`actor.strategy: megatron`): the parallel layout against the cluster and
the model, and the routing replay setting. Pure; empty for other strategies.

The layout rules are Megatron-core's process-group arithmetic (megatron.core.parallel_state
.initialize_model_parallel, which verl's Megatron engine calls with the sizes of `actor.megatron`): the world splits
into TP x PP model-parallel groups (DP = world / (TP x PP)) and, for the experts, into EP x ETP x PP groups
(expert DP = world / (EP x ETP x PP)); a layer's heads split over TP (Megatron's query groups, i.e. KV heads,
too), the layers over PP, the experts over EP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.checks import Check

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts

M = "actor.megatron."


def _divides(name: str, label: str, size: int, total: int, what: str, keys: list[str], fix: str) -> Check:
    ok = size >= 1 and total % size == 0
    return Check(name, "ok" if ok else "error",
                 f"{label} {size} {'divides' if ok else 'does not divide'} {total} {what}", keys, None if ok else fix)


def _layout(preset: Preset) -> list[Check]:
    mg, world = preset.actor.megatron, preset.cluster.world_size
    world_keys = ["cluster.nnodes", "cluster.devices_per_node"]
    checks = [
        _divides("Megatron TP x PP | world", "TP x PP", mg.model_parallel, world, "devices",
                 [M + "tensor_model_parallel_size", M + "pipeline_model_parallel_size", *world_keys],
                 f"pick TP x PP dividing the world size {world}"),
        _divides("Megatron EP x ETP x PP | world", "EP x ETP x PP", mg.expert_parallel, world, "devices",
                 [M + "expert_model_parallel_size", M + "expert_tensor_parallel_size", *world_keys],
                 f"pick EP x ETP x PP dividing the world size {world}"),
    ]
    if all(c.status == "ok" for c in checks):
        checks.append(Check("Megatron layout", "info",
                            f"TP {mg.tensor_model_parallel_size} x PP {mg.pipeline_model_parallel_size} x DP "
                            f"{world // mg.model_parallel}; experts: EP {mg.expert_model_parallel_size} x ETP "
                            f"{mg.expert_tp} x PP {mg.pipeline_model_parallel_size} x expert DP "
                            f"{world // mg.expert_parallel}", [M + "tensor_model_parallel_size"]))
    return checks


def _model(preset: Preset, m: ModelFacts) -> list[Check]:
    mg = preset.actor.megatron
    tp, pp, ep = mg.tensor_model_parallel_size, mg.pipeline_model_parallel_size, mg.expert_model_parallel_size
    checks = [
        _divides("Megatron TP | attention heads", "actor TP", tp, m.num_attention_heads, "attention heads",
                 [M + "tensor_model_parallel_size"], f"use a TP that divides {m.num_attention_heads}"),
        _divides("Megatron TP | KV heads", "actor TP", tp, m.num_key_value_heads, "KV heads (query groups)",
                 [M + "tensor_model_parallel_size"], f"use a TP that divides {m.num_key_value_heads}"),
        _divides("Megatron PP | layers", "actor PP", pp, m.num_hidden_layers, "layers",
                 [M + "pipeline_model_parallel_size"], f"use a PP that divides {m.num_hidden_layers}"),
    ]
    if m.is_moe:
        checks.append(_divides("Megatron EP | experts", "actor EP", ep, m.num_experts, "experts per layer",
                               [M + "expert_model_parallel_size"], f"use an EP that divides {m.num_experts}"))
    elif ep > 1:
        checks.append(Check("Megatron EP", "error", f"{m.name} has no experts: expert_model_parallel_size {ep} "
                            "splits nothing", [M + "expert_model_parallel_size"], "set it to 1"))
    return checks


def _routing_replay(preset: Preset, m: ModelFacts | None) -> list[Check]:
    rr = preset.actor.megatron.router_replay
    if rr == "disabled":
        return []
    if m is not None and not m.is_moe:
        return [Check("routing replay", "error", f"router_replay {rr} on {m.name}, which has no router",
                      [M + "router_replay"], "set actor.megatron.router_replay: disabled")]
    where = ("the rollout's routes (vLLM returns them with rollout.enable_rollout_routing_replay, vLLM >= 0.22: "
             "verl/workers/rollout/vllm_rollout/vllm_async_server.py:437-449)" if rr == "R3"
             else "the actor's old-log-prob pass")
    return [Check("routing replay", "info", f"router_replay {rr}: the update replays {where}; GSPO does not need "
                  "it for MoE stability (docs/presets.md \"Routing replay\")", [M + "router_replay"])]


def checks(preset: Preset, model: ModelFacts | None) -> list[Check]:
    """The Megatron route's checks (none for other strategies)."""
    if preset.actor.strategy != "megatron":
        return []
    found = _layout(preset)
    if model is not None:
        found += _model(preset, model)
    return found + _routing_replay(preset, model)

"""Preflight's memory checks: per-phase device memory of the preset's training route (FSDP: memory.py, Megatron:
megatron_memory.py) against the device of its hardware profile (profiles.memory_profile), host RAM per node against
`cluster.host_memory_gib`, and vLLM's weights and KV cache within its share of the device. Pure; the engine's
preflight runs them (engines/verl/preflight.py), and the planner through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gspo_cli.checks import Check
from gspo_cli.sizing import memory, profiles
from gspo_cli.sizing.model_facts import GiB

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts
    from gspo_cli.sizing.profiles import Profile


def phase_memory(preset: Preset, m: ModelFacts, device_bytes: int | None) -> memory.MemoryEstimate:
    """Per-phase memory of the preset's training route: FSDP (memory.py) or Megatron (megatron_memory.py)."""
    from gspo_cli.sizing import megatron_memory

    if preset.actor.strategy == "megatron":
        return megatron_memory.estimate(preset, m, device_bytes)
    return memory.estimate(preset, m, device_bytes)


def estimate_memory(preset: Preset, m: ModelFacts, device_bytes: int | None) -> dict[str, Any]:
    """Per-device memory per phase as a dict (see `gspo_cli.sizing.memory`)."""
    return phase_memory(preset, m, device_bytes).to_json()


def _actor_memory_check(preset: Preset, est: memory.MemoryEstimate, profile: Profile) -> Check:
    dev, peak = int(profile.memory_bytes), est.peak
    level = "ok" if peak.total <= 0.9 * dev else ("warn" if peak.total <= dev else "error")
    phases = "; ".join(memory.phase_line(p) for p in est.phases.values())
    return Check("actor memory", level, f"largest phase {peak.name}: ~{memory.gib(peak.total)} per device of "
                 f"{memory.gib(dev)} ({profile.memory_label}); {phases}",
                 ["actor.param_offload", "actor.optimizer_offload", "cluster.nnodes", "rollout.gpu_memory_utilization"],
                 None if level == "ok" else "lower rollout.gpu_memory_utilization (rollout phase), raise "
                 + ("actor.megatron's TP / EP, lower actor.ppo_max_token_len_per_device" if preset.actor.strategy ==
                    "megatron" else "SP") + " or use more devices (update phase: params, grads and AdamW are on the "
                 "device then even with offload); enable actor.param_offload / optimizer_offload (rollout phase)")


def _host_memory_check(preset: Preset, est: memory.MemoryEstimate) -> Check:
    """Host RAM per node at its largest phase against `cluster.host_memory_gib` (doctor prints each node's)."""
    need, node_gib = est.host_offload_bytes_per_node, preset.cluster.host_memory_gib
    keys = ["cluster.host_memory_gib", "actor.param_offload", "actor.optimizer_offload", "rollout.tensor_parallel_size"]
    line = memory.host_line(est) + (f"; vLLM sleep level {est.sleep_level}" if need else "")
    if not need:
        return Check("host memory", "ok", "nothing offloaded to host RAM", keys)
    if node_gib is None:
        return Check("host memory", "info", f"{line}; node RAM unknown: set cluster.host_memory_gib "
                     "(`gspo env doctor --preset P` checks each node's)", keys)
    have = node_gib * GiB
    level = "ok" if need <= 0.9 * have else ("warn" if need <= have else "error")
    return Check("host memory", level, f"{line} of {node_gib:g} GiB per node", keys,
                 None if level == "ok" else "turn actor.optimizer_offload / param_offload off where the device has "
                 "room, raise rollout.tensor_parallel_size (fewer vLLM weight copies asleep in host RAM), or use "
                 "nodes with more RAM")


def _rollout_memory_checks(preset: Preset, est: memory.MemoryEstimate, dev: int) -> list[Check]:
    r, world, tp = preset.rollout, preset.cluster.world_size, preset.rollout.tensor_parallel_size
    seq = preset.data.max_prompt_length + preset.data.max_response_length
    budget, w = r.gpu_memory_utilization * dev, est.rollout["rollout_weights_bytes"]
    keys = ["rollout.gpu_memory_utilization", "rollout.tensor_parallel_size"]
    held = f"weights / TP {tp}" if r.expert_parallel_size <= 1 else (
        f"weights (experts / EP {r.expert_parallel_size}, the rest / TP {tp})")
    if w + GiB >= budget:
        return [Check("rollout memory", "error", f"{held} = {memory.gib(w)} do not fit in "
                      f"gpu_memory_utilization {r.gpu_memory_utilization} x {memory.gib(dev)} = {memory.gib(budget)}",
                      keys[::-1], "raise rollout.tensor_parallel_size or gpu_memory_utilization")]
    seqs = est.rollout["full_length_seqs"]
    level = "ok" if seqs >= 1 else "error"
    replicas = world // tp if world % tp == 0 else None
    per_replica = -(-preset.data.train_batch_size * r.n // replicas) if replicas else None
    msg = (f"{held} = {memory.gib(w)}; KV cache {memory.gib(est.rollout['kv_cache_bytes'])} at utilisation "
           f"{r.gpu_memory_utilization} = {est.rollout['kv_cache_tokens']:,} tokens = {seqs} concurrent full-length "
           f"({seq}-token) sequences per replica")
    if per_replica:
        msg += f"; {per_replica} sequences per replica per step ({replicas} replicas)"
    checks = [Check("rollout memory", level, msg, keys, None if level == "ok" else "raise gpu_memory_utilization or TP")]
    if level == "ok" and r.max_num_seqs and seqs < r.max_num_seqs and per_replica and per_replica > seqs:
        checks.append(Check("rollout concurrency", "warn", f"only {seqs} full-length sequences fit but max_num_seqs "
                            f"is {r.max_num_seqs}: vLLM will preempt long ones", ["rollout.max_num_seqs"]))
    return checks


def _no_device_profile(preset: Preset, on_cpu: bool) -> Check:
    """A warning on an accelerator; on a CPU (the planner's `cpu` profile) there is no device memory but host RAM."""
    if on_cpu:
        return Check("device memory", "info", "verl on the host CPU: its memory is host RAM (host memory)")
    return Check("device memory", "warn", f"cluster.profile {preset.cluster.profile!r} is not one of "
                 f"{', '.join(p.preset_name or p.name for p in profiles.memory_checked())}: memory checked only as estimates", ["cluster.profile"],
                 "set cluster.profile")


def checks(preset: Preset, model: ModelFacts, *, on_cpu: bool) -> tuple[list[Check], dict[str, Any]]:
    """The memory checks of `preset` (`on_cpu`: its job runs on a host CPU) and the per-phase estimate."""
    profile = profiles.memory_profile(preset.cluster.profile)
    dev = int(profile.memory_bytes) if profile is not None else None
    est = phase_memory(preset, model, dev)
    if profile is None or dev is None:
        return [_no_device_profile(preset, on_cpu),
                Check("actor memory", "info", f"largest actor phase {est.peak.name} ~{memory.gib(est.peak.total)} "
                      "per device", ["actor.param_offload"]), _host_memory_check(preset, est)], {"memory": est.to_json()}
    found = [_actor_memory_check(preset, est, profile), _host_memory_check(preset, est)]
    if preset.rollout.name == "vllm":
        found += _rollout_memory_checks(preset, est, dev)
    return found, {"memory": est.to_json()}

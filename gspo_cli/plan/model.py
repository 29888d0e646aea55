"""The step-time model: seconds per phase of one GSPO step of a `Workload` on a device `Profile`. Pure arithmetic.

Phases carry verl's timing names (`timing_s/<phase>`, which both engines write) so a prediction compares
directly with a run's metrics:

- gen: prefill (compute-bound) + decode. A decode step reads the weights / TP and the KV cache of the running
  batch (bandwidth-bound), or is compute-bound at large batch, plus a per-layer launch overhead (eager vLLM,
  less with graph capture; HF generate has its own, larger one). The batch runs as many sequences as
  max_num_seqs and the KV cache allow; the step then waits for its longest response: the tail runs
  max(longest - busy steps, longest - mean) decode steps at the small batch of the truncated responses.
- update_weights: trainer -> rollout weight sync, bf16 weights gathered over the slowest link, plus the host
  reads when params are offloaded.
- reward: the rule-based verifier, per response.
- old_log_prob / ref: one forward over every token (dense + attention + LM head FLOPs), FSDP all-gathers per
  micro-batch overlapped with compute, Ulysses all-to-all when SP > 1.
- update_actor: forward + backward (3x forward; 4x with gradient checkpointing), all-gather + reduce-scatter
  per micro-batch, AdamW, and the offload transfers of params, grads and optimizer states.
- other: fixed per-step cost (dispatch, balancing, advantages), per engine (its spec's planner hooks say which):
  verl's from the profile (`step_fixed_s`), the native engine's from its own timing_s
  (`native_step_fixed_s` = `profiles.NATIVE_STEP_FIXED_S`).
- testing, save_checkpoint: validation (a generation pass over the val set) every test_freq steps and a checkpoint
  (fp32 params + AdamW, 12 B per parameter, written by every rank) every save_freq steps, spread over those steps.

verl's V1 trainer modes (`trainer.v1.trainer_mode`, workload.mode): `colocate_async` pauses unfinished responses at
the step's end and resumes them with the new weights (partial rollout), so the step stops waiting for its longest
response: gen loses its tail. `separate_async` generates on a share of the devices while the rest trains; the
step is the longer of the two sides plus the weight sync (`hidden_s` is the overlap).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gspo_cli.plan.workload import Workload
from gspo_cli.sizing.profiles import Profile

if TYPE_CHECKING:
    from gspo_cli.config.engine_registry import PlannerHooks

GiB = 1024**3
PHASES = ("gen", "update_weights", "reward", "old_log_prob", "ref", "update_actor", "testing", "save_checkpoint",
          "other")


@dataclass
class Prediction:
    phases: dict[str, float]
    details: dict[str, float] = field(default_factory=dict)
    step_tokens: float = 0.0
    devices: int = 1
    gen_bound: str = ""  # memory-bandwidth | compute | overhead | long-tail
    hidden_s: float = 0.0  # phase seconds that overlap others (separate_async: generation beside training)
    staleness: int = 0  # policy versions a trained sample may lag behind (0: on-policy)

    @property
    def step_s(self) -> float:
        return sum(self.phases.values()) - self.hidden_s

    @property
    def tokens_per_device_per_s(self) -> float:
        return self.step_tokens / self.devices / self.step_s if self.step_s > 0 else 0.0

    @property
    def bottleneck(self) -> str:
        phase = max(self.phases, key=lambda k: self.phases[k])
        share = self.phases[phase] / self.step_s if self.step_s else 0.0
        why = f" ({self.gen_bound})" if phase == "gen" and self.gen_bound else ""
        return f"{phase}{why}, {share:.0%} of the step"

    def to_json(self) -> dict:
        return {"step_s": round(self.step_s, 4), "phases": {k: round(v, 4) for k, v in self.phases.items()},
                "overlap_s": round(self.hidden_s, 4), "staleness_updates": self.staleness,
                "tokens_per_device_per_s": round(self.tokens_per_device_per_s, 3), "bottleneck": self.bottleneck,
                "details": {k: round(v, 4) for k, v in self.details.items()}}


def fwd_flops_per_token(w: Workload, ctx: float) -> float:
    """Forward FLOPs of one token attending to `ctx` earlier tokens: dense matmuls (an MoE's activated parameters
    only: attention, router and the token's top-k experts), attention, LM head."""
    m = w.model
    dense = 2 * (m.compute_params - m.embed_params)
    attn = 4 * m.layers * m.heads * m.head_dim * ctx
    return dense + attn + 2 * m.vocab * m.hidden


def kv_bytes_per_token(w: Workload) -> float:
    m = w.model
    return 2 * m.layers * max(1, m.kv_heads // w.tp) * m.head_dim * w.weight_bytes


def kv_capacity(w: Workload, prof: Profile) -> float:
    """KV-cache tokens per replica: preflight's estimate when the workload carries it, else the same rule."""
    if w.kv_capacity_tokens is not None:
        return float(w.kv_capacity_tokens)
    free = w.gpu_memory_utilization * prof.memory_bytes - rollout_weight_bytes(w) - GiB
    return max(0.0, free / kv_bytes_per_token(w))


def rollout_weight_bytes(w: Workload, tokens: float | None = None) -> float:
    """vLLM's weights on one rank (all of them, or those a pass over `tokens` tokens reads): with expert parallelism
    the experts are split over `ep` ranks and the rest over TP, else everything over TP."""
    m = w.model
    params = float(m.params) if tokens is None else m.read_params(tokens)
    experts = params - (m.params - m.expert_params)  # the experts among them (0 for a dense model)
    if w.ep > 1 and m.expert_params:
        return w.weight_bytes * (experts / w.ep + (params - experts) / w.tp)
    return w.weight_bytes * params / w.tp


def decode_step_s(w: Workload, prof: Profile, batch: float, ctx: float) -> tuple[float, str]:
    """Seconds of one decode step of `batch` sequences at context `ctx`, and what bounds it (an MoE's step reads
    only the experts its `batch` tokens picked)."""
    weights = rollout_weight_bytes(w, batch)
    kv = batch * ctx * kv_bytes_per_token(w)
    mem = (weights + kv) / (prof.hbm_bytes_s * prof.decode_bw_eff)
    compute = batch * fwd_flops_per_token(w, ctx) / w.tp / (prof.peak_flops * prof.mfu_prefill)
    if w.rollout == "hf":
        overhead = w.model.layers * prof.hf_layer_overhead_s
    else:
        graphs = 1.0 if w.enforce_eager else prof.graph_overhead_factor
        overhead = w.model.layers * prof.vllm_layer_overhead_s * graphs
    if w.tp > 1:  # two all-reduces of the batch's hidden states per layer
        overhead += 2 * w.model.layers * batch * w.model.hidden * w.weight_bytes / (prof.intra_node_bytes_s *
                                                                                    prof.comm_eff)
    bound = max((mem, "memory-bandwidth"), (compute, "compute"), (overhead, "overhead"))[1]
    return max(mem, compute) + overhead, bound


def gen_s(w: Workload, prof: Profile) -> tuple[float, dict[str, float], str]:
    replicas = max(1, w.devices // w.tp) if w.rollout == "vllm" else 1
    seqs = -(-w.trajectories // replicas)
    p, r, longest = w.prompt_mean, w.response_mean, w.longest_response
    if w.rollout == "hf":  # one padded batch; every sequence steps until the longest is done
        conc = float(seqs)
    else:
        kv_room = kv_capacity(w, prof) / (p + r)
        conc = max(1.0, min(seqs, w.max_num_seqs or 256, kv_room))
    busy_steps = seqs * r / conc
    t_busy, bound = decode_step_s(w, prof, conc, p + r / 2)
    # vLLM frees finished sequences; HF generate keeps stepping the whole padded batch
    tail_batch = conc if w.rollout == "hf" else max(1.0, min(conc, seqs * w.lengths.clip_frac))
    # The longest responses finish after the busy phase: if all start at once they outlive it by (longest - busy);
    # with a full KV cache the last admitted ones start late, and still run (longest - mean) past the others.
    tail_steps = max(0.0, longest - busy_steps, longest - r)
    t_tail, _ = decode_step_s(w, prof, tail_batch, p + 0.75 * longest)
    decode = busy_steps * t_busy + tail_steps * t_tail
    prompts = seqs if w.rollout == "vllm" else -(-w.prompts // replicas)  # HF shares each prompt's prefill
    prefill_tokens = prompts * p
    prefill = prefill_tokens * fwd_flops_per_token(w, p / 2) / w.tp / (prof.peak_flops * prof.mfu_prefill)
    if w.rollout == "vllm":  # each scheduler pass of max_num_batched_tokens reads the weights once
        passes = -(-prefill_tokens // max(1, w.max_num_batched_tokens))
        prefill += passes * decode_step_s(w, prof, 1, p)[0]
    if tail_steps * t_tail > busy_steps * t_busy:
        bound = "long-tail"
    detail = {"gen_prefill_s": prefill, "gen_decode_busy_s": busy_steps * t_busy, "gen_tail_s": tail_steps * t_tail,
              "gen_concurrency": conc, "gen_tail_tokens": tail_steps * tail_batch, "gen_busy_step_s": t_busy}
    return prefill + decode, detail, bound


def collective_s(w: Workload, prof: Profile, size: float, ranks: int | None = None) -> float:
    """An all-gather (or reduce-scatter) of `size` bytes over `ranks` devices (default: all of them): every rank
    moves (R-1)/R of it over its node-local link, and, when the group spans nodes, (nodes-1)/nodes of it leaves each
    node over the NICs of the group's ranks there. Per-rank traffic does not shrink as the group grows."""
    ranks = w.devices if ranks is None else max(1, min(ranks, w.devices))
    if ranks <= 1:
        return 0.0
    intra = size * (ranks - 1) / ranks / (prof.intra_node_bytes_s * prof.comm_eff)
    nodes = -(-ranks // w.devices_per_node)
    inter = 0.0
    if nodes > 1:
        per_node = min(ranks, w.devices_per_node)
        inter = size * (nodes - 1) / nodes / (per_node * prof.inter_node_bytes_s * prof.comm_eff)
    return max(intra, inter)


def replica_allreduce_s(w: Workload, prof: Profile, size: float) -> float:
    """HSDP (fsdp_size < devices): the gradient all-reduce of a `size`-byte shard across the R = devices / fsdp_size
    replicas, once per optimizer step. A ring moves 2(R-1)/R of it per rank; replicas of one shard sit on different
    nodes as soon as there are several, so it runs at a rank's own share of the NICs."""
    replicas = w.devices // w.shard_ranks
    if replicas <= 1:
        return 0.0
    per_rank = 2 * size * (replicas - 1) / replicas
    link = prof.inter_node_bytes_s if w.nodes > 1 else prof.intra_node_bytes_s
    return per_rank / (link * prof.comm_eff)


def hooks(w: Workload) -> PlannerHooks:
    """What the model needs to know of the workload's engine: its planner hooks (config/engine_registry.py)."""
    from gspo_cli.config.engine_registry import ENGINES

    return ENGINES.lookup(w.engine).planner


def update_weights_s(w: Workload, prof: Profile) -> float:
    if not hooks(w).syncs_weights:
        return 0.0  # one model object: generation uses the trained weights directly
    m = w.model
    gather = collective_s(w, prof, w.weight_bytes * m.params)
    host = 4 * m.params / w.shard_ranks / prof.host_bytes_s if w.param_offload else 0.0
    return gather + host


def _micro_batches(w: Workload, tokens_per_device: float, seq_len: float) -> float:
    if w.micro_tokens:
        return max(1.0, -(-tokens_per_device // w.micro_tokens))
    seqs_per_device = tokens_per_device / max(1.0, seq_len)
    per_micro = w.micro_seqs or max(1.0, seqs_per_device / w.mini_batches)
    return max(1.0, -(-seqs_per_device // per_micro))


def slowest_group_factor(w: Workload, *, train: bool) -> float:
    """How much longer the slowest data-parallel group (devices / SP) works than the mean one (>= 1).

    verl balances the step's tokens across ranks (`_balance_batch`: equal-size Karmarkar-Karp partitions, each
    sorted and laid out small-large-small), so every rank's mini-batch k holds sequences of similar length: a
    simulation of that code on 8,192 responses (2K mean, 0.5% at 28K, benchmarks/plan_async.py) puts the slowest
    rank within 1-2% of the mean per mini-batch. What no balancing removes is granularity: a group cannot work less
    than its longest sequence, so the factor is longest / (a group's share of a mini-batch, or of the whole step for
    the no-grad forward) when that share is smaller.
    """
    groups = max(1, w.devices // max(1, w.sp))
    if groups <= 1:
        return 1.0
    seq = w.prompt_mean + w.response_mean
    longest = w.prompt_mean + w.longest_response
    share = w.trajectories * seq / groups / (max(1, w.mini_batches) if train else 1)
    return max(1.0, longest / share)


def batch_move_s(w: Workload, prof: Profile) -> float:
    """A training phase's cost that no device count shrinks: verl's single controller sends the step's padded batch
    (trajectories x (max_prompt + max_response) tokens, several int64 tensors) to the workers and gathers the
    results, once per phase (sharded engines only; the native engine has one process and no dispatch)."""
    if not hooks(w).sharded:
        return 0.0
    return w.trajectories * (w.max_prompt + w.max_response) * prof.batch_move_s_per_token


def forward_pass_s(w: Workload, prof: Profile, *, train: bool) -> float:
    """One pass over every token of the step on each device: no-grad forward, or forward + backward. Compute scales
    with tokens / devices (times the slowest group's excess); FSDP's collectives per micro-batch do not shrink with
    more devices; HSDP adds a gradient all-reduce across replicas per optimizer step."""
    m = w.model
    seq = w.prompt_mean + w.response_mean
    tokens = w.trajectories * seq / w.devices
    passes = w.ppo_epochs if train else 1
    mult = (4.0 if w.grad_ckpt else 3.0) if train else 1.0
    mfu = hooks(w).train_mfu(prof)  # fitted per engine (verl FSDP, the native engine's HF model)
    compute = passes * mult * tokens * fwd_flops_per_token(w, seq / 2) / (prof.peak_flops * mfu)
    if hooks(w).sharded:
        compute *= slowest_group_factor(w, train=train)
    micros = passes * _micro_batches(w, tokens, seq)
    overhead = micros * m.layers * prof.train_layer_overhead_s * (3.0 if train else 1.0)
    comm = 0.0
    if w.devices > 1 and hooks(w).sharded:  # FSDP: all-gather per forward (and backward), reduce-scatter grads
        per_micro = w.weight_bytes * m.params * (2 if train else 1) + (4 * m.params if train else 0)
        comm = micros * collective_s(w, prof, per_micro, w.shard_ranks)
    replicas = replica_allreduce_s(w, prof, 4 * m.params / w.shard_ranks) * w.mini_batches * passes if train else 0.0
    sp = 0.0
    if w.sp > 1:  # Ulysses: 4 all-to-alls of the activations per layer forward, twice that with backward
        per_token = 4 * m.layers * m.hidden * w.weight_bytes * (w.sp - 1) / w.sp * (3 if train else 1)
        sp = passes * tokens * per_token / (prof.intra_node_bytes_s * prof.comm_eff)
    fixed = batch_move_s(w, prof)
    return max(compute, comm) + overhead + sp + replicas + fixed


def offload_s(w: Workload, prof: Profile, *, train: bool) -> float:
    shard = w.model.params / w.shard_ranks
    moved = 0.0
    if w.param_offload:  # fp32 params in and out; grads out after the update
        moved += 2 * 4 * shard + (4 * shard if train else 0)
    if w.optimizer_offload and train:  # AdamW states in for the step and back out
        moved += 2 * 8 * shard
    return moved / prof.host_bytes_s


def update_actor_s(w: Workload, prof: Profile) -> float:
    optim_steps = w.mini_batches * w.ppo_epochs
    adamw = optim_steps * 16 * 3 * w.model.params / w.shard_ranks / prof.hbm_bytes_s  # read/write p, g, m, v
    return forward_pass_s(w, prof, train=True) + adamw + offload_s(w, prof, train=True)


def testing_s(w: Workload, prof: Profile) -> float:
    """Validation every test_freq steps: one generation pass over the val set, spread over those steps."""
    if w.test_freq <= 0 or w.val_trajectories <= 0:
        return 0.0
    val = replace(w, prompts=w.val_trajectories, n=1, mode="sync")
    return gen_s(val, prof)[0] / w.test_freq


def save_s(w: Workload, prof: Profile) -> float:
    """A checkpoint every save_freq steps: each rank writes its fp32 params + AdamW shard (12 B per parameter),
    a node's ranks share its link to the file system; spread over those steps."""
    if w.save_freq <= 0:
        return 0.0
    per_node = 12 * w.model.params / w.devices * w.devices_per_node
    return per_node / prof.ckpt_write_bytes_s / w.save_freq


def other_s(w: Workload, prof: Profile) -> float:
    return hooks(w).step_fixed_s(prof)


def _phases(w: Workload, prof: Profile, gen_side: Workload, train_side: Workload) -> tuple[dict, dict, str]:
    """Seconds per phase, generation on `gen_side`'s devices and training on `train_side`'s (both `w` when sync)."""
    gen, gen_detail, bound = gen_s(gen_side, prof)
    fwd = forward_pass_s(train_side, prof, train=False) + offload_s(train_side, prof, train=False)
    phases = {
        "gen": gen,
        "update_weights": update_weights_s(w, prof),
        "reward": w.trajectories * prof.reward_s_per_response,
        "old_log_prob": fwd if w.old_log_prob else 0.0,
        "ref": fwd if w.ref else 0.0,
        "update_actor": update_actor_s(train_side, prof),
        "testing": testing_s(gen_side, prof),
        "save_checkpoint": save_s(train_side, prof),
        "other": other_s(w, prof),
    }
    details = gen_detail | {"offload_update_s": offload_s(train_side, prof, train=True),
                            "offload_forward_s": offload_s(train_side, prof, train=False) if w.old_log_prob else 0.0}
    return phases, details, bound


def split_pools(w: Workload) -> tuple[Workload, Workload]:
    """separate_async: (rollout side, training side), whole nodes when there are several (as compile splits)."""
    if w.nodes > 1:
        r_nodes = min(w.nodes - 1, max(1, round(w.nodes * w.rollout_share)))
        return replace(w, nodes=r_nodes), replace(w, nodes=w.nodes - r_nodes)
    r_dev = min(w.devices_per_node - 1, max(1, round(w.devices_per_node * w.rollout_share)))
    return replace(w, devices_per_node=r_dev), replace(w, devices_per_node=w.devices_per_node - r_dev)


def predict(w: Workload, prof: Profile) -> Prediction:
    if w.mode == "separate_async" and w.devices > 1:
        return _predict_separate(w, prof)
    phases, details, bound = _phases(w, prof, w, w)
    staleness = 0
    if w.mode == "colocate_async":  # partial rollout: the step no longer waits for the longest responses
        phases["gen"] -= details["gen_tail_s"] - _resumed_s(details)
        details["gen_tail_s_resumed_next_step"] = details.pop("gen_tail_s")
        bound, staleness = ("long-tail resumed" if bound == "long-tail" else bound), 1
    return Prediction(phases, details, w.step_tokens(), w.devices, bound, staleness=staleness)


def _resumed_s(detail: dict[str, float]) -> float:
    """The tail's tokens, resumed next step inside the full batch: extra busy decode steps at full concurrency."""
    return detail["gen_tail_tokens"] / max(1.0, detail["gen_concurrency"]) * detail["gen_busy_step_s"]


def _predict_separate(w: Workload, prof: Profile) -> Prediction:
    """Generation (with partial rollout) on the rollout pool beside old-log-prob + update on the training pool."""
    gen_side, train_side = split_pools(w)
    phases, gen_detail, _ = _phases(w, prof, gen_side, train_side)
    phases["gen"] -= gen_detail.pop("gen_tail_s") - _resumed_s(gen_detail)  # partial rollout: resumed after the sync
    phases["update_weights"] = collective_s(w, prof, w.weight_bytes * w.model.params)  # trainer -> rollout pool
    rollout_side = phases["gen"] + phases["reward"]
    training_side = phases["old_log_prob"] + phases["ref"] + phases["update_actor"]
    details = gen_detail | {"rollout_devices": gen_side.devices, "train_devices": train_side.devices,
                            "rollout_side_s": rollout_side, "train_side_s": training_side}
    bound = "generation" if rollout_side > training_side else "training"
    return Prediction(phases, details, w.step_tokens(), w.devices, bound, hidden_s=min(rollout_side, training_side),
                      staleness=w.parameter_sync_step)

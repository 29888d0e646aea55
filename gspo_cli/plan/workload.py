"""What one training step has to do, engine-neutral: the input of the step-time model.

`from_preset` reads a preset (and the model facts preflight found); published calibration points that are not
gspo presets build a `Workload` directly. Response lengths are not in a preset: the step waits for its longest
response, so the model needs the length distribution. Default (a stated assumption, see `Lengths`): prompts at
15% of max_prompt_length, responses averaging 60% of max_response_length with 20% hitting the limit, which is
what long-reasoning GSPO/DAPO runs of Qwen3 show mid-training; `gspo plan --calibrate RUN` and `lengths_from`
take the real ones from a run's metrics (prompt_length/mean, response_length/mean, response_length/clip_ratio).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts


@dataclass(frozen=True)
class Lengths:
    prompt_frac: float = 0.15  # mean prompt tokens / max_prompt_length
    response_frac: float = 0.6  # mean response tokens / max_response_length
    clip_frac: float = 0.2  # share of responses that reach max_response_length
    source: str = "assumption: prompts 15% of max, responses 60% of max, 20% truncated (long-reasoning RL)"


@dataclass(frozen=True)
class ModelShape:
    """The few numbers of a decoder the model needs (preflight's ModelFacts carries them). Mixture-of-Experts:
    `params` is every parameter (what is stored, gathered and synced), `active_params` what one token runs through
    (what its FLOPs touch), `expert_params` all experts together, `experts` / `experts_per_token` the routing."""

    name: str
    params: int
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool
    active_params: int | None = None  # None: dense, every parameter is active
    expert_params: int = 0
    experts: int = 0
    experts_per_token: int = 0

    @property
    def embed_params(self) -> int:
        return self.vocab * self.hidden * (1 if self.tied else 2)

    @property
    def compute_params(self) -> int:
        """The parameters a token's forward multiplies with: all of them, or the activated ones of an MoE."""
        return self.params if self.active_params is None else self.active_params

    def read_params(self, tokens: float) -> float:
        """Parameters a forward over `tokens` tokens reads: an MoE reads only the experts some token picked, under
        uniform routing E x (1 - (1 - k/E)^tokens) of each layer's E (all of them at large batches)."""
        if not self.experts:
            return float(self.params)
        hit = 1.0 - (1.0 - self.experts_per_token / self.experts) ** max(1.0, tokens)
        return self.params - self.expert_params * (1.0 - hit)

    @classmethod
    def from_facts(cls, m: ModelFacts) -> ModelShape:
        moe = bool(getattr(m, "is_moe", False))
        return cls(m.name, int(m.params), m.num_hidden_layers, m.hidden_size, m.num_attention_heads,
                   m.num_key_value_heads, m.head_dim, m.vocab_size, bool(m.tie_word_embeddings),
                   active_params=int(m.active_params) if moe else None,
                   expert_params=m.moe_layers * m.num_experts * m.expert_params if moe else 0,
                   experts=m.num_experts if moe else 0, experts_per_token=m.num_experts_per_tok if moe else 0)


@dataclass(frozen=True)
class Workload:
    model: ModelShape
    nodes: int
    devices_per_node: int
    engine: str  # verl | native
    rollout: str  # vllm | hf
    prompts: int  # train_batch_size
    n: int
    max_prompt: int
    max_response: int
    lengths: Lengths = field(default_factory=Lengths)
    tp: int = 1
    ep: int = 1  # rollout expert parallelism (MoE): experts split over ep ranks, the rest over tp
    sp: int = 1
    gpu_memory_utilization: float = 0.6
    max_num_seqs: int | None = None
    max_num_batched_tokens: int = 8192
    enforce_eager: bool = False
    param_offload: bool = False
    optimizer_offload: bool = False
    grad_ckpt: bool = True
    micro_tokens: int | None = None  # tokens per device per micro-batch (dynamic bsz)
    micro_seqs: int | None = None  # sequences per micro-batch (fixed micro-batches)
    mini_batches: int = 1
    ppo_epochs: int = 1
    # verl's actor.fsdp_config.fsdp_size: ranks one parameter is sharded over (-1: all devices). Smaller groups
    # (HSDP) replicate the shard: per-rank memory, offload and AdamW stay at params / fsdp_size at any device count,
    # and every optimizer step all-reduces the shard's gradients across the replicas.
    fsdp_size: int = -1
    old_log_prob: bool = True  # a separate no-grad forward for the old log-probs
    ref: bool = False  # a reference-policy forward (KL loss)
    weight_bytes: int = 2  # bf16 rollout weights / activations
    kv_capacity_tokens: int | None = None  # per rollout replica, from preflight's estimate when known
    # verl's V1 trainer mode (trainer.v1.trainer_mode): sync | colocate_async | separate_async
    mode: str = "sync"
    rollout_share: float = 0.5  # separate_async: the share of the devices that generate (the rest train)
    parameter_sync_step: int = 1  # separate_async: updates between weight syncs into the rollout
    save_freq: int = -1  # checkpoint every N steps (-1: never): its cost is spread over N steps
    test_freq: int = -1  # validation every N steps (-1: never)
    val_trajectories: int = 0  # validation prompts x val n

    @property
    def devices(self) -> int:
        return self.nodes * self.devices_per_node

    @property
    def shard_ranks(self) -> int:
        """Ranks one parameter is sharded over (FSDP: all devices; HSDP: fsdp_size)."""
        return self.devices if self.fsdp_size <= 0 else max(1, min(self.fsdp_size, self.devices))

    @property
    def longest_response(self) -> float:
        """The longest response of a step: the limit when some are truncated, else twice the mean."""
        r = self.response_mean
        return float(self.max_response) if self.lengths.clip_frac > 0 else min(float(self.max_response), 2 * r)

    @property
    def trajectories(self) -> int:
        return self.prompts * self.n

    @property
    def prompt_mean(self) -> float:
        return max(1.0, self.lengths.prompt_frac * self.max_prompt)

    @property
    def response_mean(self) -> float:
        return max(1.0, self.lengths.response_frac * self.max_response)

    def step_tokens(self) -> float:
        """Prompt + response tokens of all trajectories of one step (MindSpeed-RL's and verl's throughput count)."""
        return self.trajectories * (self.prompt_mean + self.response_mean)


def from_preset(preset: Preset, facts: ModelFacts, *, kv_capacity_tokens: int | None = None,
                lengths: Lengths | None = None) -> Workload:
    """The workload of one step of `preset` (facts: preflight's ModelFacts of its model)."""
    from gspo_cli.config.engine_registry import engine_of

    a, r, d, c = preset.actor, preset.rollout, preset.data, preset.cluster
    hooks = engine_of(preset).planner
    mini_batches = max(1, d.train_batch_size // max(1, a.ppo_mini_batch_size))
    single_pass = a.ppo_epochs == 1 and mini_batches == 1
    return Workload(
        model=ModelShape.from_facts(facts), nodes=c.nnodes, devices_per_node=c.devices_per_node,
        engine=preset.trainer.engine, rollout=r.name, prompts=d.train_batch_size, n=r.n,
        max_prompt=d.max_prompt_length, max_response=d.max_response_length, lengths=lengths or Lengths(),
        tp=r.tensor_parallel_size if r.name == "vllm" else 1, sp=a.ulysses_sequence_parallel_size,
        ep=r.expert_parallel_size if r.name == "vllm" else 1,
        gpu_memory_utilization=r.gpu_memory_utilization, max_num_seqs=r.max_num_seqs,
        max_num_batched_tokens=r.max_num_batched_tokens, enforce_eager=r.enforce_eager,
        param_offload=a.param_offload, optimizer_offload=a.optimizer_offload,
        grad_ckpt=bool(preset.model.enable_gradient_checkpointing),
        micro_tokens=a.ppo_max_token_len_per_device if a.use_dynamic_bsz else None,
        micro_seqs=a.ppo_micro_batch_size_per_device, mini_batches=mini_batches, ppo_epochs=a.ppo_epochs,
        # verl recomputes old log-probs every step; the native engine skips it on a single on-policy pass.
        old_log_prob=hooks.recomputes_old_log_prob or not single_pass, ref=preset.algorithm.use_kl_loss,
        weight_bytes=4 if preset.model.dtype == "float32" else 2, kv_capacity_tokens=kv_capacity_tokens,
        mode=preset.trainer.mode, rollout_share=preset.trainer.rollout_share,
        parameter_sync_step=preset.trainer.parameter_sync_step, save_freq=preset.trainer.save_freq,
        test_freq=preset.trainer.test_freq, val_trajectories=_val_trajectories(preset))


def _val_trajectories(preset: Preset) -> int:
    """Validation prompts x val n, from the prepared data's manifest; 0 (not counted) before prepare-data."""
    from gspo_cli.data.manifest import val_rows

    return int(val_rows(preset) or 0) * preset.rollout.val.n


def lengths_from(metrics: dict[str, float], max_prompt: int, max_response: int, base: Lengths | None = None) -> Lengths:
    """Lengths measured in a run (mean over its steps of verl's metric names), falling back to `base`."""
    base = base or Lengths()
    p = metrics.get("prompt_length/mean")
    r = metrics.get("response_length/mean")
    clip = metrics.get("response_length/clip_ratio")
    return replace(
        base,
        prompt_frac=base.prompt_frac if p is None else p / max(1, max_prompt),
        response_frac=base.response_frac if r is None else r / max(1, max_response),
        clip_frac=base.clip_frac if clip is None else clip,
        source="measured in the run" if r is not None else base.source)

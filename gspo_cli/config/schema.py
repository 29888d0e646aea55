"""The preset schema: pydantic v2 models of every section, unknown keys rejected (the section base and shared
field types: `section.py`; the `eval` section: `eval_schema.py`; `trainer.health` / `trainer.restart`: `health.py`).

A preset is one YAML file (built-in or user) describing model x cluster shape x recipe. Cross-field checks that
need no model files and no cluster live here; those that need model facts or the cluster are preflight's. Field
names follow verl's where a field maps onto a verl setting, so the compile step (`engines/verl`) is a table.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import Field, field_validator, model_validator

from gspo_cli.algo.aggregation import PresetAggMode
from gspo_cli.algo.losses import DEFAULT_CLIP_RATIO_C, DEFAULT_POLICY_LOSS, POLICY_LOSSES
from gspo_cli.config.devices import ClusterDevice, ProcessDevice
from gspo_cli.config.engine_registry import EngineName
from gspo_cli.config.eval_schema import EvalSection
from gspo_cli.config.filter_groups import FilterGroups
from gspo_cli.config.health import HealthSection, RestartSection
from gspo_cli.config.hub import HubSection, ModelRevision
from gspo_cli.config.megatron import MegatronSection, check_preset
from gspo_cli.config.rollout_correction import RolloutCorrection
from gspo_cli.config.section import NonNegInt, OneLine, PositiveFloat, PositiveInt, Probability, Section
from gspo_cli.config.trackers import TrackersSection, check_env, check_loggers
from gspo_cli.config.upstream import Departure, UpstreamSection  # noqa: F401 - Departure: re-exported


class ClusterSection(Section):
    nnodes: PositiveInt = 1
    devices_per_node: PositiveInt = 1
    device: ClusterDevice = "auto"
    # Hardware profile for memory estimates and doctor checks (a3, a2-910b, h100, h200, cpu); None = unknown.
    profile: str | None = None
    # Host RAM of one node in GiB: preflight refuses a layout whose offloaded state and sleeping vLLM weights need
    # more (gspo env doctor --preset prints each node's). None = unknown: host memory is reported, not checked.
    host_memory_gib: PositiveFloat | None = None
    # Ray address; None = RAY_ADDRESS, else the embedded local head on 127.0.0.1.
    address: OneLine | None = None
    # The python that runs job entrypoints on the cluster (the embedded local head uses this interpreter).
    python: str = "python3"

    @property
    def world_size(self) -> int:
        return self.nnodes * self.devices_per_node


class ModelSection(Section):
    # HF hub id, a local folder, or `builtin:tiny` / `builtin:tiny-qwen3-vllm` (random-init tiny Qwen3s,
    # models/tiny.py).
    path: str
    dtype: Literal["bfloat16", "float16", "float32"] = "bfloat16"
    trust_remote_code: bool = False
    # Hub revision (tag or commit) of a hub id: fetched once by `gspo prepare-model`; required on ModelScope.
    revision: ModelRevision | None = None
    enable_gradient_checkpointing: bool = False
    use_remove_padding: bool = True


class DatasetSpec(Section):
    # Source adapter name: dapo-math-17k, aime-2024, arith, ...
    source: str
    # Local raw input file; None = the prepared output already exists or the hub is used.
    input: str | None = None
    hub_repo: str | None = None
    hub_filename: str | None = None
    # Pin a hub revision so a rerun reads the same bytes.
    revision: str | None = None


class ArithSpec(Section):
    """Synthetic integer arithmetic for the tiny native demo (no network needed)."""

    train_size: PositiveInt = 2000
    val_size: PositiveInt = 200
    max_operand: PositiveInt = 9
    ops: list[Literal["+", "-", "*"]] = Field(default_factory=lambda: cast(list[Literal["+", "-", "*"]], ["+"]))
    seed: int = 0


class DataSection(Section):
    train: DatasetSpec
    val: DatasetSpec
    # Prompt convention: `dapo` = "Answer: <int>" instruction, `boxed` = \boxed{} instruction, `plain` = bare,
    # `gsm8k` = verl's GSM8K instruction (final answer after "####", as verl's gsm8k preprocessing writes it).
    prompt_style: Literal["dapo", "boxed", "plain", "gsm8k"] = "dapo"
    max_prompt_length: PositiveInt = 1024
    max_response_length: PositiveInt = 1024
    truncation: Literal["left", "right", "error", "middle"] = "error"
    train_batch_size: PositiveInt = 8
    shuffle: bool = True
    # The seed of the training prompts' order (verl's data.seed; both engines draw the same order from it); None:
    # trainer.seed. Set apart from trainer.seed, runs see the same prompts at each step with other samples.
    seed: int | None = None
    dedup: bool = True
    # Problems that appear with different answers: drop all copies (and report), keep the first, or fail.
    conflict_policy: Literal["drop", "keep-first", "error"] = "drop"
    # `en` drops problems containing CJK text; None keeps all.
    language: Literal["en"] | None = None
    arith: ArithSpec = Field(default_factory=ArithSpec)


class OverlongPenalty(Section):
    """DAPO soft overlong penalty (verl's `dapo` reward manager formula)."""

    enable: bool = False
    buffer_len: PositiveInt = 4096
    penalty_factor: float = Field(default=1.0, ge=0)


def _registered_loss_names(schema: dict[str, Any]) -> None:
    """The JSON schema's enum for loss_mode, read when the schema is built (after any loss registered since)."""
    schema["enum"] = list(POLICY_LOSSES)


class AlgorithmSection(Section):
    adv_estimator: Literal["grpo"] = "grpo"
    norm_adv_by_std_in_grpo: bool = True
    use_kl_in_reward: bool = False
    kl_coef: float = Field(default=0.0, ge=0)
    # A policy loss of the open registry in gspo_cli/algo/losses.py (gspo, gspo_token, vanilla, and any loss
    # registered there); which engine runs which is config/engine_support.py's, derived from the same registry.
    loss_mode: str = Field(default=DEFAULT_POLICY_LOSS, json_schema_extra=_registered_loss_names)
    loss_agg_mode: PresetAggMode = "seq-mean-token-mean"
    clip_ratio_low: PositiveFloat = 3e-4
    clip_ratio_high: PositiveFloat = 4e-4
    # Dual-clip bound of the vanilla (token-level PPO) loss; GSPO does not read it. verl's default is 3.0.
    clip_ratio_c: float = Field(default=DEFAULT_CLIP_RATIO_C, gt=1.0)
    use_kl_loss: bool = False
    kl_loss_coef: float = Field(default=0.0, ge=0)
    entropy_coeff: float = Field(default=0.0, ge=0)
    overlong_penalty: OverlongPenalty = Field(default_factory=OverlongPenalty)
    filter_groups: FilterGroups = Field(default_factory=FilterGroups)
    # verl's train/rollout mismatch correction (importance weights, rejection, bypass mode); null = off (verl then
    # only logs rollout_corr/* with rollout.calculate_log_probs). config/rollout_correction.py; verl engine only.
    rollout_correction: RolloutCorrection | None = None

    @field_validator("loss_mode")
    @classmethod
    def _registered_loss(cls, value: str) -> str:
        if value not in POLICY_LOSSES:
            raise ValueError(f"unknown policy loss {value!r}; registered (gspo_cli/algo/losses.py): "
                             f"{', '.join(POLICY_LOSSES)}")
        return value

    @model_validator(mode="after")
    def _kl_consistency(self) -> AlgorithmSection:
        if self.use_kl_in_reward and self.kl_coef <= 0:
            raise ValueError("use_kl_in_reward is true but kl_coef is 0: set kl_coef > 0 or use_kl_in_reward: false")
        if self.use_kl_loss and self.kl_loss_coef <= 0:
            raise ValueError("use_kl_loss is true but kl_loss_coef is 0: set kl_loss_coef > 0 or use_kl_loss: false")
        return self


class ActorSection(Section):
    # verl: fsdp2 | fsdp | megatron (set by `megatron`); native: native. Left out: the engine's first (engine_support)
    strategy: Literal["fsdp", "fsdp2", "megatron", "native"] = "fsdp2"
    # 0 is allowed: a run that computes every gradient and moves nothing (a control: the engine tests use it)
    lr: float = Field(default=1e-6, ge=0)
    lr_warmup_steps: NonNegInt = 0
    # after the warmup: constant (verl 0.9.1's optim default; the native engine's only one) or verl's cosine
    lr_scheduler_type: Literal["constant", "cosine"] = "constant"
    weight_decay: float = Field(default=0.0, ge=0)
    grad_clip: PositiveFloat = 1.0
    ppo_mini_batch_size: PositiveInt = 8
    ppo_micro_batch_size_per_device: PositiveInt | None = None
    ppo_epochs: PositiveInt = 1
    use_dynamic_bsz: bool = False
    ppo_max_token_len_per_device: PositiveInt | None = None
    ulysses_sequence_parallel_size: PositiveInt = 1
    param_offload: bool = False
    optimizer_offload: bool = False
    reshard_after_forward: bool = True
    forward_prefetch: bool = False
    entropy_checkpointing: bool = False
    entropy_from_logits_with_chunking: bool = False
    use_torch_compile: bool = False
    megatron: MegatronSection = Field(default_factory=MegatronSection)  # config/megatron.py


class ValSampling(Section):
    """Sampling used for validation during training (verl's rollout.val_kwargs)."""

    n: PositiveInt = 1
    do_sample: bool = True
    temperature: float = Field(default=1.0, ge=0)
    top_p: Probability = 1.0
    top_k: int = -1


class RolloutSection(Section):
    # verl: vllm; native: hf (transformers generate). Left out: the engine's own.
    name: Literal["vllm", "hf"] = "vllm"
    n: PositiveInt = 8
    tensor_parallel_size: PositiveInt = 1
    gpu_memory_utilization: Probability = 0.6
    max_num_batched_tokens: PositiveInt = 8192
    max_num_seqs: PositiveInt | None = None
    enable_chunked_prefill: bool = True
    enforce_eager: bool = False
    cudagraph_capture_sizes: list[PositiveInt] | None = None
    cudagraph_mode: str | None = None
    temperature: float = Field(default=1.0, ge=0)
    top_p: Probability = 1.0
    top_k: int = -1
    # verl rollout.calculate_log_probs: the rollout engine also returns its log-probs. In verl 0.9.1 they become
    # the old log-probs only in rollout-correction bypass mode; otherwise the actor recomputes the old log-probs
    # and verl logs the train/rollout gap (training/rollout_probs_diff_*), which the `mismatch` health rule reads.
    calculate_log_probs: bool = False
    update_weights_bucket_megabytes: PositiveInt = 512
    log_prob_max_token_len_per_device: PositiveInt | None = None
    # Mixture-of-Experts rollout: the experts are split over `expert_parallel_size` ranks (whole experts per rank)
    # instead of each expert being tensor-parallel. verl 0.9.1 accepts 1 or tensor_parallel_size x
    # data_parallel_size (verl/workers/config/rollout.py:294) and turns vLLM's enable_expert_parallel on above 1
    # (verl/workers/rollout/vllm_rollout/vllm_async_server.py:402).
    expert_parallel_size: PositiveInt = 1
    # vLLM data parallelism inside one rollout replica (verl's rollout.data_parallel_size): a replica is
    # tensor_parallel_size x data_parallel_size devices; above 1 it must fill whole nodes (vllm_async_server.py:383-391).
    data_parallel_size: PositiveInt = 1
    # verl's rollout MoE load balance (rollout/moe/{max,min,avg}_vio/*) every N steps, from the expert ids vLLM
    # returns with rollout.enable_rollout_routing_replay (vLLM >= 0.22); 0 = off. verl 0.9.1's V1 trainer logs it
    # (trainer/ppo/v1/trainer_base.py:1882, trainer/ppo/metric_utils.py compute_moe_lb_metrics).
    moe_load_balance_metrics_interval: NonNegInt = 0
    val: ValSampling = Field(default_factory=ValSampling)

    @model_validator(mode="after")
    def _top_k(self) -> RolloutSection:
        if self.top_k == 0 or self.top_k < -1:
            raise ValueError("top_k must be -1 (disabled) or a positive integer")
        return self


class TrainerSection(Section):
    engine: EngineName = "verl"  # the engine registry's names (config/engine_registry.py)
    project_name: str = "gspo"
    experiment_name: str | None = None
    total_epochs: PositiveInt = 1
    total_training_steps: PositiveInt | None = None
    # Save a checkpoint every N steps and on the last step (-1 = never), as verl's fit loop does; a frequency above
    # the run's length saves on the last step only (gspo_cli/engines/schedule.py). Keep the newest max_ckpt_to_keep.
    save_freq: int = -1
    max_ckpt_to_keep: PositiveInt | None = None
    # Validate every N steps and on the last step (-1 = never), the same rule.
    test_freq: int = -1
    val_before_train: bool = False
    balance_batch: bool = True
    # auto = continue from the run's last complete checkpoint; a given checkpoint: `gspo train --resume PATH` (verl).
    resume_mode: Literal["auto", "disable"] = "auto"
    # verl's logger names; tensorboard / wandb / swanlab run on both engines, their modes in `trackers`
    # (config/trackers.py, docs/trackers.md)
    loggers: list[str] = Field(default_factory=lambda: ["console", "file"])
    trackers: TrackersSection = Field(default_factory=TrackersSection)
    seed: int = 1
    device: ProcessDevice = "auto"  # of the native engine (auto: config/devices.py AUTO_RULES["torch"], npu > cuda > cpu)
    # Native engine on CPU: torch intra-op threads (None = torch's default, one per core). Tiny models run faster
    # on 1 thread, and a fixed count keeps the same-seed curve identical across machines.
    cpu_threads: PositiveInt | None = None
    # Run health (issue #16): rules on the metric stream and the stall watch (gspo_cli/config/health.py,
    # docs/health.md); restarts of the training process on transient failures, 0 disables.
    health: HealthSection = Field(default_factory=HealthSection)
    max_restarts: NonNegInt = 2
    restart: RestartSection = Field(default_factory=RestartSection)
    # verl's V1 trainer mode (trainer.v1.trainer_mode). sync: generate, then train, every step on-policy.
    # colocate_async: same devices; unfinished responses are paused at the step's end and resumed with the new
    # weights (partial rollout), so the step does not wait for its longest response. separate_async: a share of
    # the devices only generates while the rest trains; weights move every parameter_sync_step updates. Both
    # async modes train on samples up to a few policy versions old: GSPO's clip is ~1000x tighter than PPO's,
    # so watch actor/pg_clipfrac (gspo plan prints the predicted gain and this risk).
    mode: Literal["sync", "colocate_async", "separate_async"] = "sync"
    # separate_async: the share of the cluster that generates (whole nodes when nnodes > 1, else devices).
    rollout_share: Probability = 0.5
    # separate_async: optimizer updates between weight syncs; verl requires
    # train_batch_size == parameter_sync_step x ppo_mini_batch_size.
    parameter_sync_step: PositiveInt = 4
    # Native engine: validation generates at most this many sequences per generate call
    # (prompts per call = this // rollout.val.n, at least 1).
    val_sequences_per_batch: PositiveInt = 256
    # Native engine with a Mixture-of-Experts policy: routing metrics (moe/*, rollout/moe/*; docs/health.md) every
    # N steps. Each measured step costs one forward over the batch and three per mini-batch besides the update.
    routing_metrics_freq: PositiveInt = 1

    @field_validator("loggers")
    @classmethod
    def _loggers(cls, value: list[str]) -> list[str]:
        return check_loggers(value)

    @model_validator(mode="after")
    def _frequencies(self) -> TrainerSection:
        for name in ("save_freq", "test_freq"):
            value = getattr(self, name)
            if value == 0 or value < -1:
                raise ValueError(f"{name} must be -1 (never) or a positive number of steps, got {value}")
        return self


class EnvSection(Section):
    # The node setup. `vars` are exported for every job (Ray runtime_env.env_vars) and by `gspo env exports`,
    # both through `gspo_cli.env.exports.build`: variables the target vllm-ascend ignores are dropped there.
    vars: dict[str, str] = Field(default_factory=dict)
    # The vllm-ascend release the variables are judged against when this host has none (--stack or the
    # installed one wins): the job env is built on the submitting host, which may have no vllm-ascend.
    vllm_ascend: str | None = None
    # Soft open-files limit (`ulimit -n`) for Ray and every process it starts: `gspo cluster up/join` raise it
    # before `ray start`, `gspo env doctor` checks it. None = leave the limit alone.
    nofile: PositiveInt | None = None
    # Preload jemalloc when it is found on the host (LD_PRELOAD); skipped with a note when absent.
    jemalloc: bool = False
    # Names in `vars` that are secret besides those containing KEY/TOKEN/SECRET/PASSWORD/PASSWD/CREDENTIAL (the one
    # rule, gspo_cli/private.py): delivered to jobs through a 0600 file, never in Ray's runtime_env, and redacted in
    # run folders and output (jobs/secret_env.py).
    secrets: list[str] = Field(default_factory=list)

    @field_validator("vars")
    @classmethod
    def _env_rule(cls, value: dict[str, str]) -> dict[str, str]:
        from gspo_cli.config.env_rule import check_vars  # the one env-var rule (names, values, refusals)

        return check_vars(value)


class RewardSection(Section):
    # Training, `gspo eval` and `gspo score` all score with this choice. gspo: gspo's verifier (Answer: lines,
    # boxed, prose), loaded by
    # verl as `pkg://gspo_cli.rewards.verl_entry`. verl: verl's own `default_compute_score` for the row's
    # data_source (math_dapo for DAPO-Math and AIME), i.e. the reward of the upstream scripts, exactly.
    verifier: Literal["gspo", "verl"] = "gspo"


class PathsSection(Section):
    # None = $GSPO_HOME/data and $GSPO_HOME/runs.
    data_dir: str | None = None
    runs_dir: str | None = None


class OverridesSection(Section):
    """Escape hatch: raw settings for anything the schema does not model. `verl`: Hydra overrides appended last
    (checked against verl's config schema before launch)."""
    verl: list[str] = Field(default_factory=list)

    @field_validator("verl")
    @classmethod
    def _data_only(cls, value: list[str]) -> list[str]:
        from gspo_cli.config.verl_strings import check_overrides  # no instantiation keys, env or code paths

        return check_overrides(value)


class Preset(Section):
    name: OneLine
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    cluster: ClusterSection = Field(default_factory=ClusterSection)
    model: ModelSection
    data: DataSection
    algorithm: AlgorithmSection = Field(default_factory=AlgorithmSection)
    actor: ActorSection = Field(default_factory=ActorSection)
    rollout: RolloutSection = Field(default_factory=RolloutSection)
    trainer: TrainerSection = Field(default_factory=TrainerSection)
    eval: EvalSection = Field(default_factory=EvalSection)
    env: EnvSection = Field(default_factory=EnvSection)
    reward: RewardSection = Field(default_factory=RewardSection)
    # Where models and datasets download from (config/hub.py): huggingface | modelscope, optional mirror.
    hub: HubSection = Field(default_factory=HubSection)
    upstream: UpstreamSection = Field(default_factory=UpstreamSection)
    paths: PathsSection = Field(default_factory=PathsSection)
    overrides: OverridesSection = Field(default_factory=OverridesSection)

    @model_validator(mode="before")
    @classmethod
    def _engine_defaults(cls, data: Any) -> Any:
        from gspo_cli.config.engine_support import fill_engine_values
        from gspo_cli.config.verl_strings import check_interpolations

        check_interpolations(data)  # strings compiled for verl are data (verl_strings.py)

        return fill_engine_values(data, TrainerSection.model_fields["engine"].default)

    @model_validator(mode="after")
    def _cross_section(self) -> Preset:
        if self.algorithm.adv_estimator == "grpo" and self.rollout.n < 2:
            raise ValueError("rollout.n must be >= 2 for GRPO-style group advantages (one sample has no baseline)")
        if self.actor.ppo_mini_batch_size > self.data.train_batch_size:
            raise ValueError(
                f"actor.ppo_mini_batch_size={self.actor.ppo_mini_batch_size} is larger than "
                f"data.train_batch_size={self.data.train_batch_size}"
            )
        if self.data.train_batch_size % self.actor.ppo_mini_batch_size:
            raise ValueError(
                f"data.train_batch_size={self.data.train_batch_size} is not a multiple of "
                f"actor.ppo_mini_batch_size={self.actor.ppo_mini_batch_size}"
            )
        check_preset(self)  # the Megatron route's rules (config/megatron.py)
        check_env(self)  # the trackers' variables come from trainer.trackers (config/trackers.py)
        return self


def to_jsonable(preset: Preset) -> dict[str, Any]:
    return preset.model_dump(mode="json")

"""The engine registry: one entry per `trainer.engine`, carrying every fact of that engine the layers ask.

| fact of an engine                                   | field                         | asked by |
|-----------------------------------------------------|-------------------------------|----------|
| its name: the schema's `trainer.engine` values      | `name` (`NAMES`, `EngineName`) | config/schema.py; every lookup (`ENGINES.lookup`) |
| the keys it runs / ignores (refused when set), the packages its jobs need, whether `--resume RUN` continues a run | `support` (`EngineSupport`) | preset loading (config/engine_support.py), `env doctor`, `runs show` |
| the step-time model's view of it                    | `planner` (`PlannerHooks`)    | plan/ (`engine_of(preset)`) |
| its jobs: command -> `module:function` of its main  | `job_kinds` (`JobKindRef`)    | job_kinds.py registers them |
| what launches, places and probes its jobs           | `implementation` (`module:Class` of its `EngineSpec`) | engines/__init__.py (`ENGINES`, `spec_for`, `get_engine`) |

A key an engine ignores is refused when the preset sets it, i.e. when its value differs from the schema default
(a key left at its default changes nothing, so copying a verl preset and switching the engine does not trip on
keys it never touched). Keys with a fixed set of values per engine (`actor.strategy`, `rollout.name`) take the
engine's first value when the preset leaves them out, so `gspo presets show --resolved` shows what runs.

Config imports no engine: `implementation` and each job kind's `main` are import paths, imported only by the
engines and job_kinds.py above. Adding an engine: one `register_engine(Engine(...))` here and its `EngineSpec`
subclass under engines/.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gspo_cli.algo.losses import DEFAULT_POLICY_LOSS, POLICY_LOSSES, VERL_LOSS_NAMES
from gspo_cli.config.trackers import NATIVE_LOGGERS, VERL_LOGGERS
from gspo_cli.registry import Registry

_KL = "the native engine has no reference model, so no KL term; use trainer.engine: verl"
_FSDP = "the native engine trains one unsharded model on one device; use trainer.engine: verl"
_ASYNC = "the native engine generates and trains in turn on one device (sync); use trainer.engine: verl for async modes"
_VLLM = "the native engine generates with HF transformers (rollout.name: hf); use trainer.engine: verl for vLLM"
_DYN = ("the native engine splits batches by actor.ppo_micro_batch_size_per_device, not by tokens; "
        "use that key, or trainer.engine: verl")


@dataclass(frozen=True)
class EngineSupport:
    """What an engine runs, as data, checked when a preset is loaded for it (config/engine_support.py)."""

    # key -> the values this engine runs, the first its default; a callable is read at each check (the loss
    # registry grows when a module registers a loss, after this module is imported)
    values: dict[str, tuple[Any, ...] | Callable[[], tuple[Any, ...]]] = field(default_factory=dict)
    # key -> why it is ignored and what to use instead
    ignored: dict[str, str] = field(default_factory=dict)
    # list-valued key -> the items this engine runs (trainer.loggers)
    items: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Python packages (import names) its jobs need (`gspo env doctor` reports a missing one; the engine spec's
    # required_environment says how to get it)
    packages: tuple[str, ...] = ()
    # a run continues with `gspo train --resume RUN` (else: rerun with the run's config and --run-name)
    resume_flag: bool = False

    def allowed(self) -> dict[str, tuple[Any, ...]]:
        """key -> the values this engine runs now, its default first."""
        return {k: v() if callable(v) else v for k, v in self.values.items()}


def _losses(names: Iterable[str]) -> tuple[str, ...]:
    """Registered policy losses (gspo_cli/algo/losses.py), the schema's default first (it is what a preset that
    leaves algorithm.loss_mode out gets)."""
    return (DEFAULT_POLICY_LOSS, *(n for n in names if n != DEFAULT_POLICY_LOSS))


@dataclass(frozen=True)
class PlannerHooks:
    """What gspo's step-time model (plan/) needs to know about how an engine trains; each a fact of the engine,
    not of the preset."""

    # weights sharded over the devices (FSDP): gathered per forward, gradients reduce-scattered; the layout search
    # covers TP / SP / offload / memory knobs (else: the micro-batch size only)
    sharded: bool
    # generation runs in its own engine (vLLM) whose weights are synced from the trainer every step
    syncs_weights: bool
    # old log-probs recomputed every step (else skipped on a single on-policy pass: one mini-batch, one epoch)
    recomputes_old_log_prob: bool
    # verl's V1 async trainer modes are candidates of the layout search
    async_modes: bool
    # the device profile's training MFU and fixed per-step seconds that were fitted on this engine's runs
    train_mfu: Callable[[Any], float]
    step_fixed_s: Callable[[Any], float]
    # why the profile's factors for this engine predict nothing yet ("": they were fitted on this engine's runs)
    unmeasured: Callable[[Any], str] = lambda profile: ""


@dataclass(frozen=True)
class JobKindRef:
    """One job kind of an engine: the command `python -m gspo_cli.job_kinds COMMAND` runs and its
    `main(argv) -> int` as `module:function` (imported only when the job runs)."""

    name: str
    main: str
    keep_traceback: bool = False  # a training attempt: the job wrapper reads the traceback to classify the failure


@dataclass(frozen=True)
class Engine:
    """One training engine, described once (the module table)."""

    name: str
    support: EngineSupport
    planner: PlannerHooks
    job_kinds: tuple[JobKindRef, ...]
    # its `EngineSpec` subclass (engines/spec.py) as `module:Class`: launcher, device, cluster need, node
    # resources, environment
    implementation: str


# trainer.engine -> its entry; the order of registration is the order the schema's error message lists them in
ENGINES: Registry[Engine] = Registry("engine", key="trainer.engine")


def register_engine(entry: Engine) -> Engine:
    return ENGINES.add(entry.name, entry)


def engine_of(preset: Any) -> Engine:
    """The entry of the preset's `trainer.engine`; one ConfigError naming the known ones when there is none."""
    return ENGINES.lookup(preset.trainer.engine)


def _verl_mfu(profile: Any) -> float:
    return float(profile.mfu_train)


def _verl_fixed(profile: Any) -> float:
    return float(profile.step_fixed_s)


def _verl_unmeasured(profile: Any) -> str:
    return str(getattr(profile, "verl_unmeasured", "") or "")


def _native_mfu(profile: Any) -> float:
    return float(profile.native_mfu_train)


def _native_fixed(profile: Any) -> float:
    return float(profile.native_step_fixed_s)


# verl 0.9.1's trainer (FSDP2 actor, vLLM rollout) over Ray
register_engine(Engine(
    name="verl",
    support=EngineSupport(
        # verl 0.9.1's FSDP workers accept fsdp / fsdp2 (workers/config/engine.py); megatron compiles to its
        # Megatron engine (model_engine=megatron, engines/verl/megatron.py). verl 0.9.1 registers no hf rollout.
        values={"actor.strategy": ("fsdp2", "fsdp", "megatron"), "rollout.name": ("vllm",),
                # the losses verl 0.9.1 has an equal of (register_policy_loss(..., verl=NAME))
                "algorithm.loss_mode": lambda: _losses(VERL_LOSS_NAMES)},
        ignored={
            "trainer.device": "verl takes the device from cluster.device",
            "trainer.cpu_threads": "verl does not train on CPU; trainer.cpu_threads is for the native engine",
            "trainer.val_sequences_per_batch": "verl validates with its own batching; pass data.val_batch_size "
                                               "through overrides.verl",
            "trainer.routing_metrics_freq": "verl's FSDP actor exposes no routing; its rollout load balance is "
                                            "rollout.moe_load_balance_metrics_interval",
        },
        items={"trainer.loggers": VERL_LOGGERS},
        packages=("verl", "torch", "transformers"),
        resume_flag=True,
    ),
    planner=PlannerHooks(sharded=True, syncs_weights=True, recomputes_old_log_prob=True, async_modes=True,
                         train_mfu=_verl_mfu, step_fixed_s=_verl_fixed, unmeasured=_verl_unmeasured),
    job_kinds=(JobKindRef("verl-train", "gspo_cli.engines.verl.job:job_main"),
               JobKindRef("verl-export", "gspo_cli.models.verl_checkpoint:job_main")),
    implementation="gspo_cli.engines.verl.spec:VerlSpec",
))

# one process, one device, HF transformers: unsharded, generating with the trained model object itself
register_engine(Engine(
    name="native",
    support=EngineSupport(
        values={"actor.strategy": ("native",), "rollout.name": ("hf",),
                # constant after the warmup: engines/native/trainer.py constant_with_warmup
                "actor.lr_scheduler_type": ("constant",),
                "algorithm.loss_mode": lambda: _losses(POLICY_LOSSES)},  # the native trainer runs every registered loss
        ignored={
            "algorithm.use_kl_in_reward": _KL, "algorithm.kl_coef": _KL,
            "algorithm.use_kl_loss": _KL, "algorithm.kl_loss_coef": _KL,
            "algorithm.rollout_correction": "the native engine samples with the policy it trains (no separate "
                                            "rollout engine, no train/rollout gap to correct); use trainer.engine: verl",
            "algorithm.filter_groups.enable": "the native engine trains on every group it samples (no DAPO dynamic "
                                              "sampling); use trainer.engine: verl",
            "rollout.calculate_log_probs": "the native engine recomputes old log-probs with the policy (or reuses "
                                           "the update's forward); use trainer.engine: verl",
            "actor.use_dynamic_bsz": _DYN, "actor.ppo_max_token_len_per_device": _DYN,
            "rollout.log_prob_max_token_len_per_device": _DYN,
            "actor.param_offload": _FSDP, "actor.optimizer_offload": _FSDP,
            "actor.ulysses_sequence_parallel_size": _FSDP, "actor.reshard_after_forward": _FSDP,
            "actor.forward_prefetch": _FSDP, "actor.entropy_checkpointing": _FSDP,
            "actor.entropy_from_logits_with_chunking": _FSDP, "actor.use_torch_compile": _FSDP,
            "model.use_remove_padding": _FSDP,
            "rollout.max_num_batched_tokens": _VLLM, "rollout.max_num_seqs": _VLLM,
            "rollout.enable_chunked_prefill": _VLLM, "rollout.enforce_eager": _VLLM,
            "rollout.cudagraph_capture_sizes": _VLLM, "rollout.cudagraph_mode": _VLLM,
            "rollout.update_weights_bucket_megabytes": _VLLM,
            "rollout.expert_parallel_size": _VLLM, "rollout.data_parallel_size": _VLLM,
            "rollout.moe_load_balance_metrics_interval": "the native engine logs its own rollout load balance "
                                                         "(rollout/moe/*) for MoE policies; see trainer.routing_metrics_freq",
            "cluster.nnodes": "the native engine runs on one device; use trainer.engine: verl for several",
            "cluster.devices_per_node": "the native engine runs on one device; use trainer.engine: verl for several",
            "trainer.balance_batch": "the native engine has one device to balance; use trainer.engine: verl",
            "overrides.verl": "verl overrides reach only the verl engine; set trainer.engine: verl or remove them",
            "trainer.mode": _ASYNC, "trainer.rollout_share": _ASYNC, "trainer.parameter_sync_step": _ASYNC,
            "cluster.host_memory_gib": _FSDP,
        },
        # tensorboard / wandb / swanlab as verl writes them (config/trackers.py, engines/native/trackers.py)
        items={"trainer.loggers": NATIVE_LOGGERS},
        packages=("torch", "transformers"),
        resume_flag=True,  # the run's name with its config (engines/native/launch.resumed)
    ),
    planner=PlannerHooks(sharded=False, syncs_weights=False, recomputes_old_log_prob=False, async_modes=False,
                         train_mfu=_native_mfu, step_fixed_s=_native_fixed),
    job_kinds=(JobKindRef("train", "gspo_cli.engines.native.job:main"),
               JobKindRef("train-attempt", "gspo_cli.engines.native.job:attempt_main", keep_traceback=True)),
    implementation="gspo_cli.engines.native.spec:NativeSpec",
))

# the schema's `trainer.engine` values, derived from the registry (pydantic's message lists them in this order)
NAMES: tuple[str, ...] = tuple(ENGINES)
if TYPE_CHECKING:
    EngineName = str
else:
    EngineName = Literal[NAMES]

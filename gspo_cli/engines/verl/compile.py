"""Compile a resolved preset into verl 0.9.x Hydra overrides plus a Ray runtime environment. Pure: no I/O.

The table below is the whole mapping (`table`): rows of (verl key, preset key) from which both the value and the
origin are derived (engines/verl/overrides.py), plus the few real transforms as named steps; each verl key records
the preset key it came from (`origins`), so the schema check can name both when verl rejects a value. Key names are those of verl 0.9.1's `ppo_trainer.yaml`
(see `_generated_ppo_trainer.yaml`), not the older names some upstream scripts still use:

- `rollout.tensor_model_parallel_size` (the script's `tensor_parallel_size` is not a 0.9.1 key),
- `actor.optim.lr` / `optim.lr_warmup_steps` / `optim.weight_decay` / `optim.clip_grad` (the FSDP engine reads
  the optimizer's `clip_grad`; `actor.grad_clip` is set too for the legacy worker),
- `actor.fsdp_config.use_torch_compile` as well as `actor.use_torch_compile`: in 0.9.1 the FSDP engine reads the
  former, which is not interpolated from the latter, so setting only the actor key leaves torch.compile on,
- `rollout.checkpoint_engine.update_weights_bucket_megabytes` (the weight-sync bucket moved there),
- vLLM's cudagraph mode travels in `rollout.engine_kwargs.vllm.compilation_config` (verl merges the capture
  sizes from `rollout.cudagraph_capture_sizes` into it),
- `actor.fsdp_config.ulysses_sequence_parallel_size` (the engine's key; `actor.ulysses_sequence_parallel_size` is
  the deprecated alias), mirrored on the reference model as the upstream script does,
- `reward.custom_reward_function.{path,name}` (the top-level `custom_reward_function` is the legacy alias), the
  path being `pkg://gspo_cli.rewards.verl_entry`: verl's `load_module` imports it by module name on every node,
  where an absolute file path of the submitting host would not exist.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.algo.losses import VERL_LOSS_NAMES
from gspo_cli.config import trackers
from gspo_cli.engines.verl import actor_keys, explicit_defaults, megatron
from gspo_cli.engines.verl.overrides import (
    Derived,
    Entry,
    Only,
    Row,
    Section,
    Step,
    always,
    apply,
    copies,
    is_set,
    not_one,
    read,
)
from gspo_cli.engines.verl.overrides import Table as _Table
from gspo_cli.engines.verl.overrides import hydra_value as hydra_value
from gspo_cli.engines.verl.overrides import override_key as override_key

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

# Key prefixes, to keep the table short.
A = "actor_rollout_ref.actor"
R = "actor_rollout_ref.rollout"
M = "actor_rollout_ref.model"
REF = "actor_rollout_ref.ref"

VERL_MODULE = "verl.trainer.main_ppo"


@dataclass(frozen=True)
class Compiled:
    """What `gspo train` hands to verl: overrides (in order), where each came from, env, and the command."""

    overrides: list[str]
    # verl key (without a leading '+') -> preset key path ("actor.lr"), "derived: ..." or "overrides.verl[i]"
    origins: dict[str, str]
    env_vars: dict[str, str]
    run_dir: str
    notes: list[str] = field(default_factory=list)

    @property
    def runtime_env(self) -> dict[str, Any]:
        return {"env_vars": dict(self.env_vars)}

    def verl_argv(self, python: str = "python3") -> list[str]:
        """The equivalent plain verl command line (what the job wrapper runs)."""
        return [python, "-m", VERL_MODULE, *self.overrides]

    def verl_command(self, python: str = "python3") -> str:
        return shlex.join(self.verl_argv(python))


@dataclass(frozen=True)
class _Call:
    """One compile: the preset, and what the run adds to it (its folders, its name, --resume, the model folder)."""

    preset: Preset
    run_dir: Path
    train_file: str | Path
    val_file: str | Path
    experiment_name: str | None
    resume_from: str | Path | None
    model_path: str | None


def redact(env: dict[str, str], marked: list[str] | None = None) -> dict[str, str]:
    """Values of secret names hidden: gspo's one secret rule (gspo_cli/private.py), which `gspo env doctor`,
    job submission and run folders use too, plus the names the preset marks secret (env.secrets)."""
    from gspo_cli.jobs import secret_env

    return secret_env.redact(env, marked or [])


def _device_name(device: str) -> str:
    """`cluster.device` by the rule `gspo train` resolves `auto` with (launch.make_plan; config/devices.py)."""
    from gspo_cli.config import devices

    return devices.resolve(device).name


def _verl_loss(mode: str) -> str:
    return VERL_LOSS_NAMES[mode]


def _no_overlong_penalty(t: _Table, c: _Call) -> None:
    """A preset asking for the overlong penalty is refused, not compiled without it."""
    if c.preset.algorithm.overlong_penalty.enable:
        from gspo_cli.errors import ConfigError

        raise ConfigError(
            "algorithm.overlong_penalty is not compiled for the verl engine yet",
            "set algorithm.overlong_penalty.enable: false, or pass verl's reward-manager keys via overrides.verl",
        )


ALGORITHM: tuple[Entry, ...] = (
    *copies("algorithm", "algorithm", "adv_estimator", "norm_adv_by_std_in_grpo", "use_kl_in_reward"),
    Row("algorithm.kl_ctrl.kl_coef", "algorithm.kl_coef"),
    # config/rollout_correction.py; what verl makes of it: traps.py
    Section("algorithm.rollout_correction", "algorithm.rollout_correction", lambda section: section.verl_items()),
    Step(_no_overlong_penalty),
)

DATA: tuple[Entry, ...] = (
    Derived("data.train_files", "prepare-data output of data.train", lambda c: str(c.train_file)),
    Derived("data.val_files", "prepare-data output of data.val", lambda c: str(c.val_file)),
    Derived("data.prompt_key", "gspo row schema", always("prompt")),
    *copies("data", "data", "max_prompt_length", "max_response_length", "truncation", "train_batch_size", "shuffle"),
    Row("data.seed", ("data.seed", "trainer.seed")),  # the trainer's seed unless the data has its own
)

# The loss keys, the same on both routes.
LOSS: tuple[Entry, ...] = (
    Row(f"{A}.policy_loss.loss_mode", "algorithm.loss_mode", via=_verl_loss),
    *copies(A, "algorithm", "loss_agg_mode", "clip_ratio_low", "clip_ratio_high", "clip_ratio_c", "use_kl_loss",
            "kl_loss_coef", "entropy_coeff"),
)

# verl's FSDP engine computes under bf16 autocast unless fsdp_config.mixed_precision says otherwise
# (verl/workers/engine/fsdp/transformer_impl.py _build_fsdp_module: param_dtype bf16 when it is None), while the
# rollout runs in model.dtype: a float32 model would train on bf16 log-probs that differ from vLLM's float32 ones
# by ~1e-3, and the train/rollout gap metrics would measure the casts, not the weight sync.
FP32_MIXED_PRECISION = {"param_dtype": "fp32", "reduce_dtype": "fp32", "buffer_dtype": "fp32"}


def _fp32_compute(prefix: str) -> Row:
    """A float32 model computes in float32 in FSDP too (bf16 / fp16 models keep verl's default mixed precision)."""
    return Row(f"{prefix}.fsdp_config.mixed_precision", "model.dtype", via=always(FP32_MIXED_PRECISION),
               when=lambda dtype: dtype == "float32", add=True)


FSDP_ACTOR: tuple[Entry, ...] = (
    *copies(A, "actor", "strategy", "use_torch_compile"),
    Row(f"{A}.fsdp_config.use_torch_compile", "actor.use_torch_compile"),
    *LOSS,
    *actor_keys.OPTIM,
    *copies(A, "actor", "grad_clip"),
    *actor_keys.BATCHING,
    # 0.9.1's FSDP engine reads fsdp_config's SP size; `actor.ulysses_sequence_parallel_size` is the deprecated
    # alias (FSDPActorConfig.__post_init__ copies it over), so set the key the engine reads, as upstream does.
    *copies(f"{A}.fsdp_config", "actor", "ulysses_sequence_parallel_size", "param_offload", "optimizer_offload",
            "reshard_after_forward", "forward_prefetch"),
    *copies(A, "actor", "entropy_checkpointing", "entropy_from_logits_with_chunking"),
    actor_keys.CHECKPOINT,
    _fp32_compute(A),
)

# The reference model (used only with a KL term) mirrors the actor's layout, as the upstream script sets it.
FSDP_REF: tuple[Entry, ...] = (
    *copies(f"{REF}.fsdp_config", "actor", "ulysses_sequence_parallel_size", "param_offload"),
    *copies(REF, "actor", "entropy_from_logits_with_chunking"),
    _fp32_compute(REF),
)


def _own_folder(c: _Call) -> bool:
    """verl loads a folder gspo prepared: a `builtin:NAME` model's, or a pinned hub model's (models/loading.py)."""
    return c.model_path is not None and c.model_path != c.preset.model.path


def _model_folder(t: _Table, c: _Call) -> None:
    what = "the built-in model's folder" if c.preset.model.path.startswith("builtin:") else "prepared at model.revision"
    t.put(f"{M}.path", c.model_path, f"derived: model.path ({what})")


MODEL: tuple[Entry, ...] = (
    Only(_own_folder, (Step(_model_folder),), otherwise=(Row(f"{M}.path", "model.path"),)),
    *copies(M, "model", "trust_remote_code", "enable_gradient_checkpointing", "use_remove_padding"),
)

ROLLOUT_ENGINE: tuple[Entry, ...] = (
    *copies(R, "rollout", "name"),
    Row(f"{R}.dtype", "model.dtype"),
    *copies(R, "rollout", "n"),
    Row(f"{R}.tensor_model_parallel_size", "rollout.tensor_parallel_size"),
    Row(f"{R}.data_parallel_size", "rollout.data_parallel_size", when=not_one),
    Row(f"{R}.expert_parallel_size", "rollout.expert_parallel_size", when=not_one),
    # the routed expert ids come from vLLM only with routing replay's recording switched on
    Row(f"{R}.enable_rollout_routing_replay", "rollout.moe_load_balance_metrics_interval", via=always(True), when=bool),
    Row(f"{R}.moe_load_balance_metrics_interval", "rollout.moe_load_balance_metrics_interval", when=bool),
    *copies(R, "rollout", "gpu_memory_utilization", "max_num_batched_tokens"),
    Row(f"{R}.max_num_seqs", "rollout.max_num_seqs", when=is_set),
    *copies(R, "rollout", "enable_chunked_prefill", "enforce_eager"),
    Row(f"{R}.cudagraph_capture_sizes", "rollout.cudagraph_capture_sizes", via=list, when=is_set),
    # engine_kwargs.vllm is an empty dict in verl's schema, so the key is added ('+').
    Row(f"{R}.engine_kwargs.vllm.compilation_config.cudagraph_mode", "rollout.cudagraph_mode", when=is_set, add=True),
    Row(f"{R}.checkpoint_engine.update_weights_bucket_megabytes", "rollout.update_weights_bucket_megabytes"),
)

ROLLOUT_SAMPLING: tuple[Entry, ...] = (
    *copies(R, "rollout", "temperature", "top_p", "top_k", "calculate_log_probs"),
    Row(f"{R}.log_prob_max_token_len_per_gpu", "rollout.log_prob_max_token_len_per_device", when=is_set),
    *copies(f"{R}.val_kwargs", "rollout.val", "n", "do_sample", "temperature", "top_p", "top_k"),
)


def _reward(t: _Table, c: _Call) -> None:
    """The reward backend `reward.verifier` names (rewards/backends.py): gspo's verifier by module name (resolves
    on every node that has gspo installed), or verl's own default scorer."""
    from gspo_cli.rewards.backends import REWARD_BACKENDS

    path = "reward.verifier"
    backend = REWARD_BACKENDS.lookup(read(c.preset, path))
    backend.check(c.preset)
    if backend.verl_reward is None:
        t.notes.append(f"reward.verifier {backend.name}: {backend.about}")
        return
    for part, value in zip(("path", "name"), backend.verl_reward, strict=True):
        t.put(f"reward.custom_reward_function.{part}", value, path)


def _experiment_name(t: _Table, c: _Call) -> None:
    """The name `gspo train` passes (launch.make_plan: the preset's, else the run's), else the run folder's."""
    path = "trainer.experiment_name"
    t.put("trainer.experiment_name", c.experiment_name or read(c.preset, path) or c.run_dir.name, path)


def _separate_async(c: _Call) -> bool:
    return c.preset.trainer.mode == "separate_async"


def _split_pools(t: _Table, c: _Call) -> None:
    """separate_async: verl sizes the trainer's pool from trainer.nnodes x n_gpus_per_node and the rollout's from
    rollout.nnodes x n_gpus_per_node (engines/verl/modes.py splits the cluster)."""
    from gspo_cli.config import devices
    from gspo_cli.engines.verl.modes import rollout_pool

    cluster = c.preset.cluster
    nodes, per_node = rollout_pool(c.preset)
    if cluster.nnodes > 1:
        t.put("trainer.nnodes", cluster.nnodes - nodes, "derived: cluster.nnodes - rollout nodes")
    else:
        t.put("trainer.n_gpus_per_node", cluster.devices_per_node - per_node, "derived: devices - rollout devices")
    t.put(f"{R}.nnodes", nodes, "derived: trainer.rollout_share")
    t.put(f"{R}.n_gpus_per_node", per_node, "derived: trainer.rollout_share")
    # separate_async refuses the naive (colocated) weight transfer (trainer_separate_async.py:67)
    t.put(f"{R}.checkpoint_engine.backend", devices.get(_device_name(cluster.device)).collective,
          "derived: cluster.device (separate_async needs a collective weight transfer)")


def _loggers(t: _Table, c: _Call) -> None:
    """metrics.jsonl is what progress, `gspo report` and resume read: the file logger is always on."""
    path = "trainer.loggers"
    loggers = list(read(c.preset, path))
    if "file" not in loggers:
        loggers.append("file")
        t.notes.append("trainer.loggers: added 'file' (runs/<run>/metrics.jsonl is always written)")
    t.put("trainer.logger", loggers, path)


TRAINER: tuple[Entry, ...] = (
    Row("trainer.nnodes", "cluster.nnodes"),
    Row("trainer.n_gpus_per_node", "cluster.devices_per_node"),
    Row("trainer.device", "cluster.device", via=_device_name),
    *copies("trainer", "trainer", "project_name"),
    Step(_experiment_name),
    *copies("trainer", "trainer", "total_epochs"),
    Row("trainer.total_training_steps", "trainer.total_training_steps", when=is_set),
    *copies("trainer", "trainer", "save_freq"),
    Row("trainer.max_actor_ckpt_to_keep", "trainer.max_ckpt_to_keep", when=is_set),
    *copies("trainer", "trainer", "test_freq", "val_before_train"),
    # verl's V1 trainer mode; sync (verl's default) compiles to nothing, so the upstream scripts still match
    Row("trainer.v1.trainer_mode", "trainer.mode", when=lambda mode: mode != "sync"),
    Only(_separate_async, (Row("trainer.v1.separate_async.parameter_sync_step", "trainer.parameter_sync_step"),
                           Step(_split_pools))),
    *copies("trainer", "trainer", "balance_batch"),
    Step(_loggers),
    Derived("trainer.default_local_dir", "runs/<run>/checkpoints", lambda c: str(c.run_dir / "checkpoints")),
    Only(lambda c: c.resume_from is not None,
         (Derived("trainer.resume_mode", "gspo train --resume", always("resume_path")),
          Derived("trainer.resume_from_path", "gspo train --resume", lambda c: str(c.resume_from))),
         otherwise=copies("trainer", "trainer", "resume_mode")),
)


def table(megatron_route: bool) -> tuple[Entry, ...]:
    """The whole mapping, in the order verl gets it, for the preset's training route (`actor.strategy: megatron`:
    verl's Megatron engine, engines/verl/megatron.py)."""
    route = (*megatron.ACTOR, *LOSS, *megatron.REFERENCE) if megatron_route else (*FSDP_ACTOR, *FSDP_REF)
    # explicit_defaults: verl defaults that change a recipe's meaning, said by the preset
    return (*ALGORITHM, *DATA, *route, *MODEL, *ROLLOUT_ENGINE, *ROLLOUT_SAMPLING, Step(_reward),
            *explicit_defaults.rows(megatron_route), *TRAINER)


def _cpu_switches(t: _Table, p: Preset) -> dict[str, str]:
    """`cluster.device: cpu`: the named CPU switches (cpu/switches.py), each override's origin naming its switch."""
    from gspo_cli.engines.verl.cpu.switches import switches_for

    env: dict[str, str] = {}
    for switch in switches_for(p):
        for o in switch.overrides:
            t.put(o.key, o.value, f"cpu switch: {switch.name}", add=o.add)
        env.update(switch.env)
        t.notes.append(f"cpu switch {switch.name}: {switch.why}")
    return env


METRICS_ENV = "VERL_FILE_LOGGER_PATH"  # where verl's file logger writes: the run folder's metrics.jsonl


def own_env(run_dir: Path) -> dict[str, str]:
    """The variables gspo itself sets for a verl job of `run_dir`, whatever the preset, with their values (the
    env rule refuses them in a preset): the job checks its job file's env against this (job.py)."""
    from gspo_cli.engines.verl.cpu.switches import all_env

    return {METRICS_ENV: str(run_dir / "metrics.jsonl"), **all_env()}


def job_env(preset: Preset, run_dir: Path, notes: list[str]) -> dict[str, str]:
    """`gspo env exports`' own result minus host-specific lines, plus where verl's file logger writes."""
    from gspo_cli.env import exports

    fitted = exports.job_env(preset)
    env = fitted.job_env()
    for d in fitted.dropped:
        notes.append(f"env.vars.{d['name']}: dropped, ignored since vllm-ascend {d['since']} "
                     f"(judged against {fitted.stack}, {fitted.stack_source})")
    env[METRICS_ENV] = own_env(run_dir)[METRICS_ENV]
    env.update(trackers.env(preset, run_dir))  # TENSORBOARD_DIR, WANDB_MODE/_DIR, SWANLAB_MODE/_LOG_DIR: run folder
    if preset.env.jemalloc:
        notes.append("env.jemalloc: LD_PRELOAD is resolved per host by `gspo env exports`, not put in the job env")
    return env


def compile_preset(
    preset: Preset,
    *,
    run_dir: str | Path,
    train_file: str | Path,
    val_file: str | Path,
    experiment_name: str | None = None,
    resume_from: str | Path | None = None,
    model_path: str | None = None,
) -> Compiled:
    """Preset -> verl overrides + env. `resume_from` is a `global_step_N` folder (verl `resume_mode=resume_path`);
    `model_path` the folder verl loads: a `builtin:NAME` model's, or a pinned hub model's (models/loading.py)."""
    run_dir = Path(run_dir)
    t = _Table()
    call = _Call(preset, run_dir, train_file, val_file, experiment_name, resume_from, model_path)
    apply(t, call, table(preset.actor.strategy == "megatron"))
    switch_env = _cpu_switches(t, preset)
    # escape hatch last, so it wins
    for i, item in enumerate(preset.overrides.verl):
        t.out.append(item)
        t.origins[override_key(item)] = f"overrides.verl[{i}]"
    env = {**job_env(preset, run_dir, t.notes), **switch_env}
    return Compiled(overrides=t.out, origins=t.origins, env_vars=env, run_dir=str(run_dir), notes=t.notes)

"""Compile a resolved preset into verl 0.9.x Hydra overrides plus a Ray runtime environment. Pure: no I/O.

The table below is the whole mapping; each verl key records the preset key it came from (`origins`), so the
schema check can name both when verl rejects a value. Key names are those of verl 0.9.1's `ppo_trainer.yaml`
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
from gspo_cli.engines.verl import actor_keys, explicit_defaults
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


def redact(env: dict[str, str], marked: list[str] | None = None) -> dict[str, str]:
    """Values of secret names hidden: gspo's one secret rule (gspo_cli/private.py), which `gspo env doctor`,
    job submission and run folders use too, plus the names the preset marks secret (env.secrets)."""
    from gspo_cli.jobs import secret_env

    return secret_env.redact(env, marked or [])


def _device(preset: Preset) -> str:
    """The preset's device, by the rule `gspo train` resolves `auto` with (launch.make_plan; config/devices.py)."""
    from gspo_cli.config import devices

    return devices.resolve(preset.cluster.device).name


def _algorithm(t: _Table, p: Preset) -> None:
    alg = p.algorithm
    t.put("algorithm.adv_estimator", alg.adv_estimator, "algorithm.adv_estimator")
    t.put("algorithm.norm_adv_by_std_in_grpo", alg.norm_adv_by_std_in_grpo, "algorithm.norm_adv_by_std_in_grpo")
    t.put("algorithm.use_kl_in_reward", alg.use_kl_in_reward, "algorithm.use_kl_in_reward")
    t.put("algorithm.kl_ctrl.kl_coef", alg.kl_coef, "algorithm.kl_coef")
    if alg.rollout_correction is not None:  # config/rollout_correction.py; what verl makes of it: traps.py
        for key, value in alg.rollout_correction.verl_items().items():
            t.put(f"algorithm.rollout_correction.{key}", value, f"algorithm.rollout_correction.{key}")
    if alg.overlong_penalty.enable:
        from gspo_cli.errors import ConfigError

        raise ConfigError(
            "algorithm.overlong_penalty is not compiled for the verl engine yet",
            "set algorithm.overlong_penalty.enable: false, or pass verl's reward-manager keys via overrides.verl",
        )


def _data(t: _Table, p: Preset, train_file, val_file) -> None:
    d = p.data
    t.put("data.train_files", str(train_file), "derived: prepare-data output of data.train")
    t.put("data.val_files", str(val_file), "derived: prepare-data output of data.val")
    t.put("data.prompt_key", "prompt", "derived: gspo row schema")
    t.put("data.max_prompt_length", d.max_prompt_length, "data.max_prompt_length")
    t.put("data.max_response_length", d.max_response_length, "data.max_response_length")
    t.put("data.truncation", d.truncation, "data.truncation")
    t.put("data.train_batch_size", d.train_batch_size, "data.train_batch_size")
    t.put("data.shuffle", d.shuffle, "data.shuffle")
    if d.seed is None:
        t.put("data.seed", p.trainer.seed, "trainer.seed")
    else:
        t.put("data.seed", d.seed, "data.seed")


def _actor_loss(t: _Table, p: Preset) -> None:
    alg = p.algorithm
    t.put(f"{A}.policy_loss.loss_mode", VERL_LOSS_NAMES[alg.loss_mode], "algorithm.loss_mode")
    t.put(f"{A}.loss_agg_mode", alg.loss_agg_mode, "algorithm.loss_agg_mode")
    t.put(f"{A}.clip_ratio_low", alg.clip_ratio_low, "algorithm.clip_ratio_low")
    t.put(f"{A}.clip_ratio_high", alg.clip_ratio_high, "algorithm.clip_ratio_high")
    t.put(f"{A}.clip_ratio_c", alg.clip_ratio_c, "algorithm.clip_ratio_c")
    t.put(f"{A}.use_kl_loss", alg.use_kl_loss, "algorithm.use_kl_loss")
    t.put(f"{A}.kl_loss_coef", alg.kl_loss_coef, "algorithm.kl_loss_coef")
    t.put(f"{A}.entropy_coeff", alg.entropy_coeff, "algorithm.entropy_coeff")


def _actor(t: _Table, p: Preset) -> None:
    a = p.actor
    t.put(f"{A}.strategy", a.strategy, "actor.strategy")
    t.put(f"{A}.use_torch_compile", a.use_torch_compile, "actor.use_torch_compile")
    t.put(f"{A}.fsdp_config.use_torch_compile", a.use_torch_compile, "actor.use_torch_compile")
    _actor_loss(t, p)
    actor_keys.optim(t, p)
    t.put(f"{A}.grad_clip", a.grad_clip, "actor.grad_clip")
    actor_keys.batching(t, p)
    # 0.9.1's FSDP engine reads fsdp_config's SP size; `actor.ulysses_sequence_parallel_size` is the deprecated
    # alias (FSDPActorConfig.__post_init__ copies it over), so set the key the engine reads, as upstream does.
    t.put(f"{A}.fsdp_config.ulysses_sequence_parallel_size", a.ulysses_sequence_parallel_size,
          "actor.ulysses_sequence_parallel_size")
    t.put(f"{A}.fsdp_config.param_offload", a.param_offload, "actor.param_offload")
    t.put(f"{A}.fsdp_config.optimizer_offload", a.optimizer_offload, "actor.optimizer_offload")
    t.put(f"{A}.fsdp_config.reshard_after_forward", a.reshard_after_forward, "actor.reshard_after_forward")
    t.put(f"{A}.fsdp_config.forward_prefetch", a.forward_prefetch, "actor.forward_prefetch")
    t.put(f"{A}.entropy_checkpointing", a.entropy_checkpointing, "actor.entropy_checkpointing")
    t.put(f"{A}.entropy_from_logits_with_chunking", a.entropy_from_logits_with_chunking,
          "actor.entropy_from_logits_with_chunking")
    t.put(f"{A}.checkpoint.save_contents", ["model", "optimizer", "extra"], "derived: resumable checkpoints")
    _fp32_compute(t, A, p)


# verl's FSDP engine computes under bf16 autocast unless fsdp_config.mixed_precision says otherwise
# (verl/workers/engine/fsdp/transformer_impl.py _build_fsdp_module: param_dtype bf16 when it is None), while the
# rollout runs in model.dtype: a float32 model would train on bf16 log-probs that differ from vLLM's float32 ones
# by ~1e-3, and the train/rollout gap metrics would measure the casts, not the weight sync.
FP32_MIXED_PRECISION = {"param_dtype": "fp32", "reduce_dtype": "fp32", "buffer_dtype": "fp32"}


def _fp32_compute(t: _Table, prefix: str, p: Preset) -> None:
    """A float32 model computes in float32 in FSDP too (bf16 / fp16 models keep verl's default mixed precision)."""
    if p.model.dtype == "float32":
        t.put(f"{prefix}.fsdp_config.mixed_precision", FP32_MIXED_PRECISION, "model.dtype", add=True)


def _ref(t: _Table, p: Preset) -> None:
    """The reference model (used only with a KL term) mirrors the actor's layout, as the upstream script sets it."""
    a = p.actor
    t.put(f"{REF}.fsdp_config.ulysses_sequence_parallel_size", a.ulysses_sequence_parallel_size,
          "actor.ulysses_sequence_parallel_size")
    t.put(f"{REF}.fsdp_config.param_offload", a.param_offload, "actor.param_offload")
    t.put(f"{REF}.entropy_from_logits_with_chunking", a.entropy_from_logits_with_chunking,
          "actor.entropy_from_logits_with_chunking")
    _fp32_compute(t, REF, p)


def _model(t: _Table, p: Preset, model_path: str | None) -> None:
    m = p.model
    if model_path is not None and model_path != m.path:
        what = "the built-in model's folder" if m.path.startswith("builtin:") else "prepared at model.revision"
        t.put(f"{M}.path", model_path, f"derived: model.path ({what})")
    else:
        t.put(f"{M}.path", m.path, "model.path")
    t.put(f"{M}.trust_remote_code", m.trust_remote_code, "model.trust_remote_code")
    t.put(f"{M}.enable_gradient_checkpointing", m.enable_gradient_checkpointing, "model.enable_gradient_checkpointing")
    t.put(f"{M}.use_remove_padding", m.use_remove_padding, "model.use_remove_padding")


def _rollout_engine(t: _Table, p: Preset) -> None:
    r = p.rollout
    t.put(f"{R}.name", r.name, "rollout.name")
    t.put(f"{R}.dtype", p.model.dtype, "model.dtype")
    t.put(f"{R}.n", r.n, "rollout.n")
    t.put(f"{R}.tensor_model_parallel_size", r.tensor_parallel_size, "rollout.tensor_parallel_size")
    if r.data_parallel_size != 1:
        t.put(f"{R}.data_parallel_size", r.data_parallel_size, "rollout.data_parallel_size")
    if r.expert_parallel_size != 1:
        t.put(f"{R}.expert_parallel_size", r.expert_parallel_size, "rollout.expert_parallel_size")
    if r.moe_load_balance_metrics_interval:
        # the routed expert ids come from vLLM only with routing replay's recording switched on
        t.put(f"{R}.enable_rollout_routing_replay", True, "rollout.moe_load_balance_metrics_interval")
        t.put(f"{R}.moe_load_balance_metrics_interval", r.moe_load_balance_metrics_interval,
              "rollout.moe_load_balance_metrics_interval")
    t.put(f"{R}.gpu_memory_utilization", r.gpu_memory_utilization, "rollout.gpu_memory_utilization")
    t.put(f"{R}.max_num_batched_tokens", r.max_num_batched_tokens, "rollout.max_num_batched_tokens")
    if r.max_num_seqs is not None:
        t.put(f"{R}.max_num_seqs", r.max_num_seqs, "rollout.max_num_seqs")
    t.put(f"{R}.enable_chunked_prefill", r.enable_chunked_prefill, "rollout.enable_chunked_prefill")
    t.put(f"{R}.enforce_eager", r.enforce_eager, "rollout.enforce_eager")
    if r.cudagraph_capture_sizes is not None:
        t.put(f"{R}.cudagraph_capture_sizes", list(r.cudagraph_capture_sizes), "rollout.cudagraph_capture_sizes")
    if r.cudagraph_mode is not None:
        # engine_kwargs.vllm is an empty dict in verl's schema, so the key is added ('+').
        t.put(f"{R}.engine_kwargs.vllm.compilation_config.cudagraph_mode", r.cudagraph_mode, "rollout.cudagraph_mode",
              add=True)
    t.put(f"{R}.checkpoint_engine.update_weights_bucket_megabytes", r.update_weights_bucket_megabytes,
          "rollout.update_weights_bucket_megabytes")


def _rollout_sampling(t: _Table, p: Preset) -> None:
    r = p.rollout
    t.put(f"{R}.temperature", r.temperature, "rollout.temperature")
    t.put(f"{R}.top_p", r.top_p, "rollout.top_p")
    t.put(f"{R}.top_k", r.top_k, "rollout.top_k")
    t.put(f"{R}.calculate_log_probs", r.calculate_log_probs, "rollout.calculate_log_probs")
    if r.log_prob_max_token_len_per_device is not None:
        t.put(f"{R}.log_prob_max_token_len_per_gpu", r.log_prob_max_token_len_per_device,
              "rollout.log_prob_max_token_len_per_device")
    t.put(f"{R}.val_kwargs.n", r.val.n, "rollout.val.n")
    t.put(f"{R}.val_kwargs.do_sample", r.val.do_sample, "rollout.val.do_sample")
    t.put(f"{R}.val_kwargs.temperature", r.val.temperature, "rollout.val.temperature")
    t.put(f"{R}.val_kwargs.top_p", r.val.top_p, "rollout.val.top_p")
    t.put(f"{R}.val_kwargs.top_k", r.val.top_k, "rollout.val.top_k")


def _reward(t: _Table, p: Preset) -> None:
    """The reward backend `reward.verifier` names (rewards/backends.py): gspo's verifier by module name (resolves
    on every node that has gspo installed), or verl's own default scorer."""
    from gspo_cli.rewards.backends import REWARD_BACKENDS

    backend = REWARD_BACKENDS.lookup(p.reward.verifier)
    backend.check(p)
    if backend.verl_reward is not None:
        path, name = backend.verl_reward
        t.put("reward.custom_reward_function.path", path, "reward.verifier")
        t.put("reward.custom_reward_function.name", name, "reward.verifier")
    else:
        t.notes.append(f"reward.verifier {backend.name}: {backend.about}")


def _trainer_mode(t: _Table, p: Preset) -> None:
    """verl's V1 trainer mode; sync (verl's default) compiles to nothing, so the upstream scripts still match."""
    tr = p.trainer
    if tr.mode == "sync":
        return
    t.put("trainer.v1.trainer_mode", tr.mode, "trainer.mode")
    if tr.mode != "separate_async":
        return
    from gspo_cli.engines.verl.modes import rollout_pool

    nodes, per_node = rollout_pool(p)
    t.put("trainer.v1.separate_async.parameter_sync_step", tr.parameter_sync_step, "trainer.parameter_sync_step")
    # verl sizes the trainer's pool from trainer.nnodes x n_gpus_per_node and the rollout's from these two
    if p.cluster.nnodes > 1:
        t.put("trainer.nnodes", p.cluster.nnodes - nodes, "derived: cluster.nnodes - rollout nodes")
    else:
        t.put("trainer.n_gpus_per_node", p.cluster.devices_per_node - per_node, "derived: devices - rollout devices")
    t.put("actor_rollout_ref.rollout.nnodes", nodes, "derived: trainer.rollout_share")
    t.put("actor_rollout_ref.rollout.n_gpus_per_node", per_node, "derived: trainer.rollout_share")
    # separate_async refuses the naive (colocated) weight transfer (trainer_separate_async.py:67)
    from gspo_cli.config import devices

    t.put("actor_rollout_ref.rollout.checkpoint_engine.backend", devices.get(_device(p)).collective,
          "derived: cluster.device (separate_async needs a collective weight transfer)")


def _trainer(t: _Table, p: Preset, run_dir: Path, experiment_name: str | None, resume_from) -> None:
    tr = p.trainer
    t.put("trainer.nnodes", p.cluster.nnodes, "cluster.nnodes")
    t.put("trainer.n_gpus_per_node", p.cluster.devices_per_node, "cluster.devices_per_node")
    t.put("trainer.device", _device(p), "cluster.device")
    t.put("trainer.project_name", tr.project_name, "trainer.project_name")
    t.put("trainer.experiment_name", experiment_name or tr.experiment_name or run_dir.name, "trainer.experiment_name")
    t.put("trainer.total_epochs", tr.total_epochs, "trainer.total_epochs")
    if tr.total_training_steps is not None:
        t.put("trainer.total_training_steps", tr.total_training_steps, "trainer.total_training_steps")
    t.put("trainer.save_freq", tr.save_freq, "trainer.save_freq")
    if tr.max_ckpt_to_keep is not None:
        t.put("trainer.max_actor_ckpt_to_keep", tr.max_ckpt_to_keep, "trainer.max_ckpt_to_keep")
    t.put("trainer.test_freq", tr.test_freq, "trainer.test_freq")
    t.put("trainer.val_before_train", tr.val_before_train, "trainer.val_before_train")
    _trainer_mode(t, p)
    t.put("trainer.balance_batch", tr.balance_batch, "trainer.balance_batch")
    loggers = list(tr.loggers)
    if "file" not in loggers:
        # metrics.jsonl is what progress, `gspo report` and resume read: the file logger is always on.
        loggers.append("file")
        t.notes.append("trainer.loggers: added 'file' (runs/<run>/metrics.jsonl is always written)")
    t.put("trainer.logger", loggers, "trainer.loggers")
    t.put("trainer.default_local_dir", str(run_dir / "checkpoints"), "derived: runs/<run>/checkpoints")
    if resume_from is not None:
        t.put("trainer.resume_mode", "resume_path", "derived: gspo train --resume")
        t.put("trainer.resume_from_path", str(resume_from), "derived: gspo train --resume")
    else:
        t.put("trainer.resume_mode", tr.resume_mode, "trainer.resume_mode")


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
    _algorithm(t, preset)
    _data(t, preset, train_file, val_file)
    if preset.actor.strategy == "megatron":  # verl's Megatron engine: engines/verl/megatron.py
        from gspo_cli.engines.verl import megatron

        megatron.actor(t, preset)
        _actor_loss(t, preset)
        megatron.ref(t, preset)
    else:
        _actor(t, preset)
        _ref(t, preset)
    _model(t, preset, model_path)
    _rollout_engine(t, preset)
    _rollout_sampling(t, preset)
    _reward(t, preset)
    explicit_defaults.put(t, preset)  # verl defaults that change a recipe's meaning, said by the preset
    _trainer(t, preset, run_dir, experiment_name, resume_from)
    switch_env = _cpu_switches(t, preset)
    # escape hatch last, so it wins
    for i, item in enumerate(preset.overrides.verl):
        t.out.append(item)
        t.origins[override_key(item)] = f"overrides.verl[{i}]"
    env = {**job_env(preset, run_dir, t.notes), **switch_env}
    return Compiled(overrides=t.out, origins=t.origins, env_vars=env, run_dir=str(run_dir), notes=t.notes)

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
- `reward.custom_reward_function.{path,name}` (the top-level `custom_reward_function` is the legacy alias).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Key prefixes, to keep the table short.
A = "actor_rollout_ref.actor"
R = "actor_rollout_ref.rollout"
M = "actor_rollout_ref.model"

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


def hydra_value(value: Any) -> str:
    """Render a Python value as a Hydra override value that parses back to the same type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if ("." in text or "e" in text or "inf" in text or "nan" in text) else text + ".0"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    text = str(value)
    # Bare strings are fine for paths and identifiers; anything Hydra could read as another type, or that holds
    # grammar characters, is single-quoted.
    if re.fullmatch(r"[A-Za-z_/~][\w./~:-]*", text) and text.lower() not in (
        "true", "false", "null", "none", "inf", "nan"
    ):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def override_key(override: str) -> str:
    """`+a.b=c` / `++a.b=c` / `~a.b` -> `a.b`."""
    key = override.split("=", 1)[0]
    return key.lstrip("+~")


def redact(env: dict[str, str]) -> dict[str, str]:
    """Values of secret-like names (KEY, TOKEN, SECRET, PASSWORD, ...) hidden: the rule `gspo env doctor` uses."""
    from gspo_cli.env.probes import is_secret

    return {k: ("<redacted>" if is_secret(k) else v) for k, v in env.items()}


def _device(preset) -> str:
    device = preset.cluster.device
    if device == "auto":
        # verl auto-switches to npu when torch_npu is present (main_ppo's auto_set_device); cuda is its default.
        return "cuda"
    return device


def compile_preset(
    preset,
    *,
    run_dir: str | Path,
    train_file: str | Path,
    val_file: str | Path,
    reward_path: str | Path,
    experiment_name: str | None = None,
    resume_from: str | Path | None = None,
) -> Compiled:
    """Preset -> verl overrides + env. `resume_from` is a `global_step_N` folder (verl `resume_mode=resume_path`)."""
    p = preset
    a, r, t, d, alg, m = p.actor, p.rollout, p.trainer, p.data, p.algorithm, p.model
    run_dir = Path(run_dir)
    out: list[str] = []
    origins: dict[str, str] = {}
    notes: list[str] = []

    def put(key: str, value: Any, origin: str, *, add: bool = False) -> None:
        out.append(f"{'+' if add else ''}{key}={hydra_value(value)}")
        origins[key] = origin

    # ---- algorithm
    put("algorithm.adv_estimator", alg.adv_estimator, "algorithm.adv_estimator")
    put("algorithm.norm_adv_by_std_in_grpo", alg.norm_adv_by_std_in_grpo, "algorithm.norm_adv_by_std_in_grpo")
    put("algorithm.use_kl_in_reward", alg.use_kl_in_reward, "algorithm.use_kl_in_reward")
    put("algorithm.kl_ctrl.kl_coef", alg.kl_coef, "algorithm.kl_coef")
    if alg.overlong_penalty.enable:
        from gspo_cli.errors import ConfigError

        raise ConfigError(
            "algorithm.overlong_penalty is not compiled for the verl engine yet",
            "set algorithm.overlong_penalty.enable: false, or pass verl's reward-manager keys via overrides.verl",
        )

    # ---- data (files from prepare-data)
    put("data.train_files", str(train_file), "derived: prepare-data output of data.train")
    put("data.val_files", str(val_file), "derived: prepare-data output of data.val")
    put("data.prompt_key", "prompt", "derived: gspo row schema")
    put("data.max_prompt_length", d.max_prompt_length, "data.max_prompt_length")
    put("data.max_response_length", d.max_response_length, "data.max_response_length")
    put("data.truncation", d.truncation, "data.truncation")
    put("data.train_batch_size", d.train_batch_size, "data.train_batch_size")
    put("data.shuffle", d.shuffle, "data.shuffle")
    put("data.seed", t.seed, "trainer.seed")

    # ---- actor (FSDP)
    put(f"{A}.strategy", a.strategy, "actor.strategy")
    put(f"{A}.use_torch_compile", a.use_torch_compile, "actor.use_torch_compile")
    put(f"{A}.fsdp_config.use_torch_compile", a.use_torch_compile, "actor.use_torch_compile")
    put(f"{A}.policy_loss.loss_mode", alg.loss_mode, "algorithm.loss_mode")
    put(f"{A}.loss_agg_mode", alg.loss_agg_mode, "algorithm.loss_agg_mode")
    put(f"{A}.clip_ratio_low", alg.clip_ratio_low, "algorithm.clip_ratio_low")
    put(f"{A}.clip_ratio_high", alg.clip_ratio_high, "algorithm.clip_ratio_high")
    put(f"{A}.use_kl_loss", alg.use_kl_loss, "algorithm.use_kl_loss")
    put(f"{A}.kl_loss_coef", alg.kl_loss_coef, "algorithm.kl_loss_coef")
    put(f"{A}.entropy_coeff", alg.entropy_coeff, "algorithm.entropy_coeff")
    put(f"{A}.optim.lr", a.lr, "actor.lr")
    put(f"{A}.optim.lr_warmup_steps", a.lr_warmup_steps, "actor.lr_warmup_steps")
    put(f"{A}.optim.weight_decay", a.weight_decay, "actor.weight_decay")
    put(f"{A}.optim.clip_grad", a.grad_clip, "actor.grad_clip")
    put(f"{A}.grad_clip", a.grad_clip, "actor.grad_clip")
    put(f"{A}.ppo_mini_batch_size", a.ppo_mini_batch_size, "actor.ppo_mini_batch_size")
    if a.ppo_micro_batch_size_per_device is not None:
        put(f"{A}.ppo_micro_batch_size_per_gpu", a.ppo_micro_batch_size_per_device,
            "actor.ppo_micro_batch_size_per_device")
    put(f"{A}.ppo_epochs", a.ppo_epochs, "actor.ppo_epochs")
    put(f"{A}.use_dynamic_bsz", a.use_dynamic_bsz, "actor.use_dynamic_bsz")
    if a.ppo_max_token_len_per_device is not None:
        put(f"{A}.ppo_max_token_len_per_gpu", a.ppo_max_token_len_per_device, "actor.ppo_max_token_len_per_device")
    put(f"{A}.ulysses_sequence_parallel_size", a.ulysses_sequence_parallel_size,
        "actor.ulysses_sequence_parallel_size")
    put(f"{A}.fsdp_config.param_offload", a.param_offload, "actor.param_offload")
    put(f"{A}.fsdp_config.optimizer_offload", a.optimizer_offload, "actor.optimizer_offload")
    put(f"{A}.fsdp_config.reshard_after_forward", a.reshard_after_forward, "actor.reshard_after_forward")
    put(f"{A}.fsdp_config.forward_prefetch", a.forward_prefetch, "actor.forward_prefetch")
    put(f"{A}.entropy_checkpointing", a.entropy_checkpointing, "actor.entropy_checkpointing")
    put(f"{A}.entropy_from_logits_with_chunking", a.entropy_from_logits_with_chunking,
        "actor.entropy_from_logits_with_chunking")
    put(f"{A}.checkpoint.save_contents", ["model", "optimizer", "extra"], "derived: resumable checkpoints")

    # ---- model
    put(f"{M}.path", m.path, "model.path")
    put(f"{M}.trust_remote_code", m.trust_remote_code, "model.trust_remote_code")
    put(f"{M}.enable_gradient_checkpointing", m.enable_gradient_checkpointing, "model.enable_gradient_checkpointing")
    put(f"{M}.use_remove_padding", m.use_remove_padding, "model.use_remove_padding")

    # ---- rollout (vLLM)
    put(f"{R}.name", r.name, "rollout.name")
    put(f"{R}.dtype", m.dtype, "model.dtype")
    put(f"{R}.n", r.n, "rollout.n")
    put(f"{R}.tensor_model_parallel_size", r.tensor_parallel_size, "rollout.tensor_parallel_size")
    put(f"{R}.gpu_memory_utilization", r.gpu_memory_utilization, "rollout.gpu_memory_utilization")
    put(f"{R}.max_num_batched_tokens", r.max_num_batched_tokens, "rollout.max_num_batched_tokens")
    if r.max_num_seqs is not None:
        put(f"{R}.max_num_seqs", r.max_num_seqs, "rollout.max_num_seqs")
    put(f"{R}.enable_chunked_prefill", r.enable_chunked_prefill, "rollout.enable_chunked_prefill")
    put(f"{R}.enforce_eager", r.enforce_eager, "rollout.enforce_eager")
    if r.cudagraph_capture_sizes is not None:
        put(f"{R}.cudagraph_capture_sizes", list(r.cudagraph_capture_sizes), "rollout.cudagraph_capture_sizes")
    if r.cudagraph_mode is not None:
        # engine_kwargs.vllm is an empty dict in verl's schema, so the key is added ('+').
        put(f"{R}.engine_kwargs.vllm.compilation_config.cudagraph_mode", r.cudagraph_mode, "rollout.cudagraph_mode",
            add=True)
    put(f"{R}.temperature", r.temperature, "rollout.temperature")
    put(f"{R}.top_p", r.top_p, "rollout.top_p")
    put(f"{R}.top_k", r.top_k, "rollout.top_k")
    put(f"{R}.calculate_log_probs", r.calculate_log_probs, "rollout.calculate_log_probs")
    put(f"{R}.checkpoint_engine.update_weights_bucket_megabytes", r.update_weights_bucket_megabytes,
        "rollout.update_weights_bucket_megabytes")
    if r.log_prob_max_token_len_per_device is not None:
        put(f"{R}.log_prob_max_token_len_per_gpu", r.log_prob_max_token_len_per_device,
            "rollout.log_prob_max_token_len_per_device")
    put(f"{R}.val_kwargs.n", r.val.n, "rollout.val.n")
    put(f"{R}.val_kwargs.do_sample", r.val.do_sample, "rollout.val.do_sample")
    put(f"{R}.val_kwargs.temperature", r.val.temperature, "rollout.val.temperature")
    put(f"{R}.val_kwargs.top_p", r.val.top_p, "rollout.val.top_p")
    put(f"{R}.val_kwargs.top_k", r.val.top_k, "rollout.val.top_k")

    # ---- reward: the same compute_score that `gspo eval` uses
    put("reward.custom_reward_function.path", str(reward_path), "derived: gspo_cli/rewards/verl_entry.py")
    put("reward.custom_reward_function.name", "compute_score", "derived: gspo reward function")

    # ---- trainer
    put("trainer.nnodes", p.cluster.nnodes, "cluster.nnodes")
    put("trainer.n_gpus_per_node", p.cluster.devices_per_node, "cluster.devices_per_node")
    put("trainer.device", _device(p), "cluster.device")
    put("trainer.project_name", t.project_name, "trainer.project_name")
    put("trainer.experiment_name", experiment_name or t.experiment_name or run_dir.name, "trainer.experiment_name")
    put("trainer.total_epochs", t.total_epochs, "trainer.total_epochs")
    if t.total_training_steps is not None:
        put("trainer.total_training_steps", t.total_training_steps, "trainer.total_training_steps")
    put("trainer.save_freq", t.save_freq, "trainer.save_freq")
    if t.max_ckpt_to_keep is not None:
        put("trainer.max_actor_ckpt_to_keep", t.max_ckpt_to_keep, "trainer.max_ckpt_to_keep")
    put("trainer.test_freq", t.test_freq, "trainer.test_freq")
    put("trainer.val_before_train", t.val_before_train, "trainer.val_before_train")
    put("trainer.balance_batch", t.balance_batch, "trainer.balance_batch")
    loggers = list(t.loggers)
    if "file" not in loggers:
        # metrics.jsonl is what progress, `gspo report` and resume read: the file logger is always on.
        loggers.append("file")
        notes.append("trainer.loggers: added 'file' (runs/<run>/metrics.jsonl is always written)")
    put("trainer.logger", loggers, "trainer.loggers")
    put("trainer.default_local_dir", str(run_dir / "checkpoints"), "derived: runs/<run>/checkpoints")
    if resume_from is not None:
        put("trainer.resume_mode", "resume_path", "derived: gspo train --resume")
        put("trainer.resume_from_path", str(resume_from), "derived: gspo train --resume")
    else:
        put("trainer.resume_mode", t.resume_mode, "trainer.resume_mode")

    # ---- escape hatch last, so it wins
    for i, item in enumerate(p.overrides.verl):
        out.append(item)
        origins[override_key(item)] = f"overrides.verl[{i}]"

    env = {str(k): str(v) for k, v in p.env.vars.items()}
    env["VERL_FILE_LOGGER_PATH"] = str(run_dir / "metrics.jsonl")
    if p.env.jemalloc:
        notes.append("env.jemalloc: LD_PRELOAD is resolved per host by `gspo env exports`, not put in the job env")
    return Compiled(overrides=out, origins=origins, env_vars=env, run_dir=str(run_dir), notes=notes)


def keys_of(overrides: Iterable[str]) -> list[str]:
    return [override_key(o) for o in overrides]

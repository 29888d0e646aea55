"""The compiled verl overrides of the reference preset: a golden file, the upstream values checked one by one
through verl's own config composition (Hydra, struct mode), and every built-in verl preset passing verl's
validators."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl import schema_check
from gspo_cli.engines.verl.compile import compile_preset, hydra_value, override_key, redact

GOLDEN = Path(__file__).parent / "golden" / "qwen3-32b-4x16.overrides.txt"
RUN = "/gspo/runs/RUN"
PATHS = dict(run_dir=RUN, train_file="/gspo/data/dapo-math-17k/train.parquet",
             val_file="/gspo/data/aime-2024/val.parquet")

# The upstream Ascend script's values (issue #2's list), under verl 0.9.1 key names. Key -> value as verl holds it
# after composition.
A, R, M = "actor_rollout_ref.actor", "actor_rollout_ref.rollout", "actor_rollout_ref.model"
UPSTREAM = {
    "trainer.nnodes": 4, "trainer.n_gpus_per_node": 16, "trainer.device": "npu",
    f"{M}.path": "Qwen/Qwen3-32B",
    "data.max_prompt_length": 2048, "data.max_response_length": 8192, "data.truncation": "left",
    "data.train_batch_size": 256, "data.prompt_key": "prompt",
    "algorithm.adv_estimator": "grpo", "algorithm.norm_adv_by_std_in_grpo": True, "algorithm.use_kl_in_reward": False,
    f"{A}.use_kl_loss": False, f"{A}.entropy_coeff": 0.0,
    f"{A}.policy_loss.loss_mode": "gspo", f"{A}.loss_agg_mode": "seq-mean-token-mean",
    f"{A}.clip_ratio_low": 3e-4, f"{A}.clip_ratio_high": 4e-4,
    f"{A}.strategy": "fsdp2", f"{A}.optim.lr": 1e-6, f"{A}.optim.lr_warmup_steps": 10,
    f"{A}.optim.weight_decay": 0.1, f"{A}.optim.clip_grad": 1.0, f"{A}.grad_clip": 1.0,
    f"{A}.ppo_mini_batch_size": 64, f"{A}.use_dynamic_bsz": True, f"{A}.ppo_max_token_len_per_gpu": 2560,
    f"{A}.fsdp_config.ulysses_sequence_parallel_size": 4, f"{A}.clip_ratio_c": 10.0,
    f"{A}.fsdp_config.param_offload": True, f"{A}.fsdp_config.optimizer_offload": True,
    f"{A}.fsdp_config.reshard_after_forward": True, f"{A}.fsdp_config.forward_prefetch": True,
    f"{A}.entropy_checkpointing": True, f"{A}.entropy_from_logits_with_chunking": True,
    f"{M}.enable_gradient_checkpointing": True, f"{M}.use_remove_padding": True,
    f"{A}.use_torch_compile": False, f"{A}.fsdp_config.use_torch_compile": False,
    f"{R}.name": "vllm", f"{R}.n": 16, f"{R}.tensor_model_parallel_size": 4, f"{R}.gpu_memory_utilization": 0.7,
    f"{R}.max_num_batched_tokens": 10240, f"{R}.enable_chunked_prefill": True, f"{R}.enforce_eager": False,
    f"{R}.cudagraph_capture_sizes": [8, 16, 32, 64, 128, 192, 256],
    f"{R}.engine_kwargs.vllm.compilation_config.cudagraph_mode": "FULL_DECODE_ONLY",
    f"{R}.temperature": 1.0, f"{R}.top_p": 1.0, f"{R}.top_k": -1, f"{R}.calculate_log_probs": True,
    f"{R}.checkpoint_engine.update_weights_bucket_megabytes": 4096,
    "trainer.total_epochs": 10, "trainer.balance_batch": True, "trainer.resume_mode": "auto",
    "trainer.project_name": "GSPO-Qwen3-32B-BASE-MATH", "trainer.experiment_name": "GSPO-Qwen3-32B-BASE-FSDP-vLLM",
    "trainer.val_before_train": False,
}
# Departures from the upstream script: the preset's `upstream.departures`, checked by test_upstream_parity.py.
# What gspo wires in (issue #7): reward, metrics file, checkpoints folder, data files.
WIRING = {
    "reward.custom_reward_function.path": "pkg://gspo_cli.rewards.verl_entry", "reward.custom_reward_function.name": "compute_score",
    "trainer.logger": ["console", "file"], "trainer.default_local_dir": f"{RUN}/checkpoints",
    "data.train_files": PATHS["train_file"], "data.val_files": PATHS["val_file"],
}


@pytest.fixture(scope="module")
def compiled():
    loaded = presets.load("qwen3-32b-4x16")
    return compile_preset(loaded.preset, **PATHS)


@pytest.fixture(scope="module")
def composed(compiled):
    return schema_check.compose(compiled.overrides)


def test_golden_file(compiled):
    text = "\n".join(compiled.overrides) + "\n"
    if os.environ.get("GSPO_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), (
        "compiled overrides changed; if intended, rerun with GSPO_UPDATE_GOLDEN=1 and review the diff"
    )


@pytest.mark.parametrize("key", sorted(UPSTREAM))
def test_upstream_value_reaches_verl(composed, key):
    from omegaconf import OmegaConf

    value = OmegaConf.select(composed, key)
    value = OmegaConf.to_container(value) if OmegaConf.is_config(value) else value
    assert value == UPSTREAM[key]


def test_gspo_wiring_and_env(compiled, composed):
    from omegaconf import OmegaConf

    for key, want in WIRING.items():
        value = OmegaConf.select(composed, key)
        assert (OmegaConf.to_container(value) if OmegaConf.is_config(value) else value) == want, key
    assert compiled.env_vars["VERL_FILE_LOGGER_PATH"] == f"{RUN}/metrics.jsonl"
    # the job env is `gspo env exports`' result for the preset's vllm-ascend 0.23.0: obsolete variables dropped
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM" not in compiled.env_vars and "VLLM_USE_V1" not in compiled.env_vars
    assert compiled.env_vars["HCCL_EXEC_TIMEOUT"] == "3600" and compiled.env_vars["CPU_AFFINITY_CONF"] == "1"
    assert any("VLLM_USE_V1: dropped" in n for n in compiled.notes)
    # every override names the preset key it came from
    assert all(override_key(o) in compiled.origins for o in compiled.overrides)
    assert compiled.origins[f"{A}.optim.lr"] == "actor.lr"


def test_resume_and_escape_hatch():
    loaded = presets.load("qwen3-32b-4x16", ["overrides.verl=[trainer.log_val_generations=5]"])
    c = compile_preset(loaded.preset, **PATHS, resume_from=f"{RUN}/checkpoints/global_step_40")
    assert "trainer.resume_mode=resume_path" in c.overrides
    assert f"trainer.resume_from_path={RUN}/checkpoints/global_step_40" in c.overrides
    assert c.overrides[-1] == "trainer.log_val_generations=5"
    assert c.origins["trainer.log_val_generations"] == "overrides.verl[0]"


def test_hydra_values_round_trip_through_hydra():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for value in [True, 0, -1, 1e-6, 3.0e-4, 0.7, "left", "Qwen/Qwen3-32B", "1.0", "true", "a b", "it's",
                  [8, 16], ["console", "file"], None, "/p/with=equals"]:
        parsed = parser.parse_override(f"k={hydra_value(value)}").value()
        assert parsed == value, (value, hydra_value(value), parsed)


def test_secrets_are_redacted():
    env = redact({"WANDB_API_KEY": "abc", "HF_TOKEN": "x", "VLLM_USE_V1": "1", "OPENAI_KEY": "k",
                  "DB_PASSWORD": "p", "my_secret": "s"})
    assert env == {"WANDB_API_KEY": "<redacted>", "HF_TOKEN": "<redacted>", "VLLM_USE_V1": "1",
                   "OPENAI_KEY": "<redacted>", "DB_PASSWORD": "<redacted>", "my_secret": "<redacted>"}


@pytest.mark.slow
def test_every_builtin_verl_preset_passes_verls_validators():
    """Stage 2 runs verl's own validate_config and config dataclasses on each preset's overrides (no cache)."""
    from gspo_cli.config.presets import builtin_sources

    names = [s.name for s in builtin_sources() if (s.data.get("trainer") or {}).get("engine", "verl") == "verl"]
    assert {"qwen3-32b-4x16", "qwen3-8b-1x16", "qwen3-8b-2x8", "qwen3-0.6b-1x1", "qwen3-32b-4x8-h100"} <= set(names)
    for name in names:
        loaded = presets.load(name)
        result = schema_check.check(compile_preset(loaded.preset, **PATHS), loaded, use_cache=False)
        assert result.validated and not result.cached
        assert any("All configuration checks passed" in m for m in result.messages), result.messages


def test_every_builtin_verl_preset_evaluates_with_the_template_it_trains_with():
    """verl renders training prompts with Qwen3's chat template default (thinking on); eval must do the same,
    or the AIME numbers measure a prompt format the policy never saw."""
    from gspo_cli.config.presets import builtin_sources

    names = [s.name for s in builtin_sources() if (s.data.get("trainer") or {}).get("engine", "verl") == "verl"]
    assert len(names) >= 5
    for name in names:
        preset = presets.load(name).preset
        assert preset.eval.prepare, name
        for bench in preset.eval.prepare:  # the benchmarks the preset configures (the rest keep built-in values)
            assert preset.eval.benchmarks[bench].enable_thinking is True, f"{name}: eval.benchmarks.{bench}.enable_thinking"


def test_separate_async_on_cpu_gets_the_cpu_weight_transfer_and_composes():
    """tiny-verl in separate_async: verl's nccl engine needs a GPU, so the CPU job names gspo's cpu_store engine
    (loaded through verl's custom_backend_module hook); an NPU preset in the same mode keeps hccl."""
    sets = ["trainer.mode=separate_async", "cluster.devices_per_node=2", "trainer.parameter_sync_step=1"]
    c = compile_preset(presets.load("tiny-verl", sets).preset, run_dir=RUN, train_file="/d/t.parquet",
                       val_file="/d/v.parquet")
    assert f"{R}.checkpoint_engine.backend=cpu_store" in c.overrides
    assert f"{R}.checkpoint_engine.custom_backend_module=gspo_cli.engines.verl.cpu.checkpoint_engine" in c.overrides
    assert c.origins[f"{R}.checkpoint_engine.backend"] == "cpu switch: cpu_weight_transfer"
    assert "trainer.n_gpus_per_node=1" in c.overrides and f"{R}.n_gpus_per_node=1" in c.overrides
    cfg = schema_check.compose(c.overrides)
    assert cfg.actor_rollout_ref.rollout.checkpoint_engine.backend == "cpu_store"
    sync = compile_preset(presets.load("tiny-verl").preset, run_dir=RUN, train_file="/d/t.parquet",
                          val_file="/d/v.parquet")
    assert not any("checkpoint_engine.backend" in o for o in sync.overrides)
    npu = compile_preset(presets.load("qwen3-32b-4x16", ["trainer.mode=separate_async"]).preset, **PATHS)
    assert f"{R}.checkpoint_engine.backend=hccl" in npu.overrides
    assert npu.origins[f"{R}.checkpoint_engine.backend"].startswith("derived")

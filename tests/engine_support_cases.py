"""Shared by the per-engine support tests: a non-default value for every key an engine ignores, and the real-CLI
check that such a key fails with one `Error:` line."""

from __future__ import annotations

from pathlib import Path

# key -> a valid value different from the schema default (KL switches come with their coefficient)
NON_DEFAULT: dict[str, list[str]] = {
    "algorithm.use_kl_in_reward": ["algorithm.use_kl_in_reward=true", "algorithm.kl_coef=0.01"],
    "algorithm.kl_coef": ["algorithm.kl_coef=0.01"],
    "algorithm.use_kl_loss": ["algorithm.use_kl_loss=true", "algorithm.kl_loss_coef=0.01"],
    "algorithm.kl_loss_coef": ["algorithm.kl_loss_coef=0.01"],
    "algorithm.rollout_correction": ["algorithm.rollout_correction.rollout_is=sequence"],
    "algorithm.filter_groups.enable": ["algorithm.filter_groups.enable=true"],
    "rollout.calculate_log_probs": ["rollout.calculate_log_probs=true"],
    "actor.use_dynamic_bsz": ["actor.use_dynamic_bsz=true"],
    "actor.ppo_max_token_len_per_device": ["actor.ppo_max_token_len_per_device=4096"],
    "rollout.log_prob_max_token_len_per_device": ["rollout.log_prob_max_token_len_per_device=4096"],
    "actor.param_offload": ["actor.param_offload=true"],
    "actor.optimizer_offload": ["actor.optimizer_offload=true"],
    "actor.ulysses_sequence_parallel_size": ["actor.ulysses_sequence_parallel_size=2"],
    "actor.reshard_after_forward": ["actor.reshard_after_forward=false"],
    "actor.forward_prefetch": ["actor.forward_prefetch=true"],
    "actor.entropy_checkpointing": ["actor.entropy_checkpointing=true"],
    "actor.entropy_from_logits_with_chunking": ["actor.entropy_from_logits_with_chunking=true"],
    "actor.use_torch_compile": ["actor.use_torch_compile=true"],
    "model.use_remove_padding": ["model.use_remove_padding=false"],
    "rollout.max_num_batched_tokens": ["rollout.max_num_batched_tokens=4096"],
    "rollout.max_num_seqs": ["rollout.max_num_seqs=64"],
    "rollout.enable_chunked_prefill": ["rollout.enable_chunked_prefill=false"],
    "rollout.enforce_eager": ["rollout.enforce_eager=true"],
    "rollout.cudagraph_capture_sizes": ["rollout.cudagraph_capture_sizes=[8,16]"],
    "rollout.cudagraph_mode": ["rollout.cudagraph_mode=FULL_DECODE_ONLY"],
    "rollout.update_weights_bucket_megabytes": ["rollout.update_weights_bucket_megabytes=1024"],
    "cluster.nnodes": ["cluster.nnodes=2"],
    "cluster.devices_per_node": ["cluster.devices_per_node=8"],
    "cluster.host_memory_gib": ["cluster.host_memory_gib=512"],
    "trainer.mode": ["trainer.mode=colocate_async"],
    "trainer.rollout_share": ["trainer.rollout_share=0.25"],
    "trainer.parameter_sync_step": ["trainer.parameter_sync_step=2"],
    "trainer.balance_batch": ["trainer.balance_batch=false"],
    "overrides.verl": ["overrides.verl=[trainer.log_val_generations=5]"],
    "trainer.device": ["trainer.device=cuda"],
    "trainer.cpu_threads": ["trainer.cpu_threads=2"],
    "trainer.val_sequences_per_batch": ["trainer.val_sequences_per_batch=64"],
    "trainer.routing_metrics_freq": ["trainer.routing_metrics_freq=2"],
    "rollout.expert_parallel_size": ["rollout.expert_parallel_size=2"],
    "rollout.data_parallel_size": ["rollout.data_parallel_size=2"],
    "rollout.moe_load_balance_metrics_interval": ["rollout.moe_load_balance_metrics_interval=1"],
}


def assert_one_line_refusal(proc, *needles: str) -> str:
    """Exit 2, no traceback, exactly one `Error:` line (a `Hint:` may follow) naming every needle."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("Error: ")]
    assert len(errors) == 1 and len(lines) <= 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)
    return errors[0]


def write_preset(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path

"""The actor keys both of verl's training routes read the same way (FSDP: compile.py, Megatron: megatron.py): the
optimizer's step settings, the mini/micro-batch sizes and what a checkpoint holds. One place, so the two routes
cannot drift apart."""

from __future__ import annotations

from gspo_cli.engines.verl.overrides import Derived, Row, copies, is_set

A = "actor_rollout_ref.actor"

OPTIM = (
    *copies(f"{A}.optim", "actor", "lr", "lr_warmup_steps", "weight_decay"),
    Row(f"{A}.optim.clip_grad", "actor.grad_clip"),
)

BATCHING = (
    Row(f"{A}.ppo_mini_batch_size", "actor.ppo_mini_batch_size"),
    Row(f"{A}.ppo_micro_batch_size_per_gpu", "actor.ppo_micro_batch_size_per_device", when=is_set),
    Row(f"{A}.ppo_epochs", "actor.ppo_epochs"),
    Row(f"{A}.use_dynamic_bsz", "actor.use_dynamic_bsz"),
    Row(f"{A}.ppo_max_token_len_per_gpu", "actor.ppo_max_token_len_per_device", when=is_set),
)

CHECKPOINT = Derived(f"{A}.checkpoint.save_contents", "resumable checkpoints", lambda _: ["model", "optimizer", "extra"])

"""The actor keys both of verl's training routes read the same way (FSDP: compile.py, Megatron: megatron.py): the
optimizer's step settings and the mini/micro-batch sizes. One place, so the two routes cannot drift apart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

A = "actor_rollout_ref.actor"


def optim(t: Any, p: Preset) -> None:
    a = p.actor
    t.put(f"{A}.optim.lr", a.lr, "actor.lr")
    t.put(f"{A}.optim.lr_warmup_steps", a.lr_warmup_steps, "actor.lr_warmup_steps")
    t.put(f"{A}.optim.weight_decay", a.weight_decay, "actor.weight_decay")
    t.put(f"{A}.optim.clip_grad", a.grad_clip, "actor.grad_clip")


def batching(t: Any, p: Preset) -> None:
    a = p.actor
    t.put(f"{A}.ppo_mini_batch_size", a.ppo_mini_batch_size, "actor.ppo_mini_batch_size")
    if a.ppo_micro_batch_size_per_device is not None:
        t.put(f"{A}.ppo_micro_batch_size_per_gpu", a.ppo_micro_batch_size_per_device,
              "actor.ppo_micro_batch_size_per_device")
    t.put(f"{A}.ppo_epochs", a.ppo_epochs, "actor.ppo_epochs")
    t.put(f"{A}.use_dynamic_bsz", a.use_dynamic_bsz, "actor.use_dynamic_bsz")
    if a.ppo_max_token_len_per_device is not None:
        t.put(f"{A}.ppo_max_token_len_per_gpu", a.ppo_max_token_len_per_device, "actor.ppo_max_token_len_per_device")

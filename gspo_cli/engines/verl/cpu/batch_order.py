"""Each step's batch in a fixed order on CPU: prompts as the dataloader drew them, then sample number.

verl 0.9.1's V1 trainer takes a step's rollouts from its replay buffer (verl/trainer/ppo/v1/replay_buffer.py
`_materialize_batch`) in the order TransferQueue lists their keys `{uid}_{session_id}_{index}`: the order in which
the agent loop's sessions finished and were put (trainer/ppo/v1/agent_loop_tq.py `_agent_loop_postprocess`), so
a group's samples lie scattered among others'. `_balance_batch` (trainer_base.py:1608) keeps that order on one
data-parallel rank (a partition of one, sorted: seqlen_balancing.get_seqlen_balanced_partitions) and the actor
cuts it into mini-batches in order (workers/engine_workers.py `train_mini_batch`, shuffle off). Which samples
share a mini-batch, and so every optimizer step, changed with the scheduling: two identical tiny-verl jobs with
the same rollouts parted at step 1's update (docs/benchmarks.md "Two identical tiny-verl jobs").

With GSPO_VERL_BATCH_ORDER=1 (the compiled CPU switch `verl_batch_order`) the trainer numbers each prompt as it
draws it (`_next_train_batch`, where verl gives prompts their uids, in dataloader order, which data.seed fixes),
and `_balance_batch` first sorts the batch by (that number, session_id, output index): each GRPO group whole and
in sample order, groups in the order they were drawn (older first, as `_select_prompt_uids` prefers). verl's own
balancing, padding and split then run unchanged on that order. A key of a prompt not drawn in this process (a
resumed run's re-issued prompts) sorts after the numbered ones, by its uid.
"""

from __future__ import annotations

import functools
import itertools
import os
import types
from typing import Any

from gspo_cli.engines.verl.cpu.switches import BATCH_ORDER_ENV

TRAINER_MODULE = "verl.trainer.ppo.v1.trainer_base"


def sort_key(key: str, drawn: dict[str, int]) -> tuple:
    """Where a trajectory key `{uid}_{session_id}_{index}` goes: its prompt's draw number, then its sample
    number and output index; prompts not drawn here after all drawn ones, by uid."""
    uid, _, rest = key.partition("_")
    session, _, index = rest.partition("_")
    numbers = tuple(int(part) if part.isdigit() else -1 for part in (session, index))
    return (0, drawn[uid], "", *numbers) if uid in drawn else (1, 0, uid, *numbers)


def fixed_order(keys: list[str], drawn: dict[str, int]) -> list[int]:
    """The permutation that puts `keys` in sort_key order (stable: equal keys keep their places)."""
    return sorted(range(len(keys)), key=lambda i: sort_key(keys[i], drawn))


def _patch(module: types.ModuleType) -> None:
    trainer = module.PPOTrainer
    next_batch, balance = trainer._next_train_batch, trainer._balance_batch
    if getattr(balance, "_gspo_order", False):
        return

    @functools.wraps(next_batch)
    def _next_train_batch(self: Any, *args: Any, **kwargs: Any) -> Any:
        batch = next_batch(self, *args, **kwargs)
        if not hasattr(self, "_gspo_drawn"):
            self._gspo_drawn, self._gspo_count = {}, itertools.count()
        for uid in list(batch["uid"]):
            self._gspo_drawn.setdefault(str(uid), next(self._gspo_count))
        return batch

    @functools.wraps(balance)
    def _balance_batch(self: Any, batch: Any, *args: Any, **kwargs: Any) -> Any:
        drawn = getattr(self, "_gspo_drawn", {})
        batch.reorder(fixed_order(list(batch.keys), drawn))
        for key in batch.keys:  # each prompt is trained on once: forget it
            drawn.pop(key.partition("_")[0], None)
        return balance(self, batch, *args, **kwargs)

    _balance_batch._gspo_order = True  # type: ignore[attr-defined]
    trainer._next_train_batch = _next_train_batch
    trainer._balance_batch = _balance_batch


def install(after_import: Any) -> None:
    """Called by platform.py under VERL_PLATFORM=cpu."""
    if os.environ.get(BATCH_ORDER_ENV) == "1":
        after_import(TRAINER_MODULE, _patch)

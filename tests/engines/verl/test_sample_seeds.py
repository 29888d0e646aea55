"""The CPU switch vllm_sample_seeds (engines/verl/cpu/sample_seeds.py) on a stand-in for verl's AgentLoopWorker:
each request gets a seed from its identity, the same whatever the order, a seed already set is kept, and nothing
is patched without the switch."""

from __future__ import annotations

import asyncio
import types

from gspo_cli.engines.verl.cpu import sample_seeds
from gspo_cli.engines.verl.cpu.switches import SWITCHES


def _module(seen: list) -> types.ModuleType:
    class AgentLoopWorker:
        async def _run_agent_loop(self, sampling_params, trajectory, *, agent_name, **kwargs):
            seen.append((trajectory["sample_index"], trajectory["rollout_n"], sampling_params.get("seed")))

    module = types.ModuleType("fake_agent_loop")
    module.AgentLoopWorker = AgentLoopWorker
    return module


def _run(module, order, params=None) -> None:
    worker = module.AgentLoopWorker()
    for index, n in order:
        asyncio.run(worker._run_agent_loop(dict(params or {"temperature": 1.0}),
                                           {"step": 3, "sample_index": index, "rollout_n": n}, agent_name="single"))


def test_a_seed_per_response_whatever_the_order():
    seen: list = []
    module = _module(seen)
    sample_seeds._patch(module)
    sample_seeds._patch(module)  # idempotent: patched once
    _run(module, [(7, 0), (7, 1), (9, 0)])
    first = {(i, n): s for i, n, s in seen}
    seen.clear()
    _run(module, [(9, 0), (7, 1), (7, 0)])
    assert {(i, n): s for i, n, s in seen} == first
    assert len(set(first.values())) == 3  # the samples of a group differ
    assert first[(7, 0)] == sample_seeds.sample_seed(3, 7, 0)
    seen.clear()
    _run(module, [(7, 0)], {"seed": 5})  # a seed someone set is kept
    assert seen == [(7, 0, 5)]


def test_the_v1_trainers_samples_of_one_prompt_get_distinct_seeds():
    """verl's V1 agent loop (agent_loop_tq.py) passes one trajectory (rollout_n 0) to a prompt's n samples and
    numbers them by session_id: the seeds must still differ (the first version used rollout_n: one seed per group,
    identical responses, grad_norm 0 on every step of a real run)."""
    seen: list = []
    module = _module(seen)
    sample_seeds._patch(module)
    worker = module.AgentLoopWorker()
    for session in range(4):
        asyncio.run(worker._run_agent_loop({}, trajectory={"step": 1, "sample_index": 5, "rollout_n": 0},
                                           agent_name="single", session_id=session))
    assert len({s for _, _, s in seen}) == 4


def test_unpatched_without_the_switch_and_compiled_for_cpu(monkeypatch):
    monkeypatch.delenv(sample_seeds.SEEDS_ENV, raising=False)
    calls: list = []
    sample_seeds.install(lambda *a: calls.append(a))
    assert calls == []
    monkeypatch.setenv(sample_seeds.SEEDS_ENV, "1")
    sample_seeds.install(lambda *a: calls.append(a))
    assert calls and calls[0][0] == sample_seeds.AGENT_LOOP_MODULE
    switch = next(s for s in SWITCHES if s.name == "vllm_sample_seeds")
    assert switch.env == {sample_seeds.SEEDS_ENV: "1"}

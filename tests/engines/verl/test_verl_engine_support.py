"""The verl engine refuses native-only keys (trainer.device, trainer.cpu_threads, the native validation batch)
and strategies / rollouts it does not run: a ConfigError naming the key, the engine and the alternative."""

from __future__ import annotations

import pytest
from engine_support_cases import NON_DEFAULT, assert_one_line_refusal, write_preset

from gspo_cli.config.engine_registry import ENGINES
from gspo_cli.config.presets import load_preset
from gspo_cli.errors import ConfigError

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow


def test_set_but_unsupported_key_fails_with_one_line_through_the_cli(tmp_path, gspo):
    preset = write_preset(tmp_path, "cpu", "extends: qwen3-0.6b-1x1\ntrainer:\n  cpu_threads: 4\n")
    proc = gspo("train", "--preset", str(preset), "--dry-run")
    line = assert_one_line_refusal(proc, "trainer.cpu_threads", "verl engine", "native engine")
    assert f"{preset}:3" in line
    print(line)


@pytest.mark.parametrize("key", sorted(ENGINES["verl"].support.ignored))
def test_every_ignored_key_is_refused_when_set(key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as info:
        load_preset("qwen3-0.6b-1x1", NON_DEFAULT[key])
    assert "verl engine" in info.value.message and info.value.hint


@pytest.mark.parametrize("item", ["actor.strategy=native", "rollout.name=hf"])
def test_values_verl_does_not_run(item, gspo):
    proc = gspo("presets", "show", "qwen3-0.6b-1x1", "--set", item)
    assert_one_line_refusal(proc, item.split("=")[0], "verl engine", "use ")


def test_verl_strategies_are_verls_own():
    """fsdp and fsdp2 are what verl 0.9.1's FSDP engine config accepts (its own assertion is the oracle); megatron is
    the strategy verl's Megatron actor config sets when composed with model_engine=megatron."""
    from verl.workers.config.engine import FSDPEngineConfig

    from gspo_cli.engines.verl.schema_check import compose

    for strategy in ENGINES["verl"].support.values["actor.strategy"]:
        if strategy == "megatron":
            assert compose(["model_engine=megatron"]).actor_rollout_ref.actor.strategy == "megatron"
            assert load_preset("nightly-gspo-qwen3-30b-a3").actor.strategy == strategy
            continue
        assert load_preset("qwen3-0.6b-1x1", [f"actor.strategy={strategy}"]).actor.strategy == strategy
        FSDPEngineConfig(strategy=strategy)  # raises for a strategy verl does not accept
    with pytest.raises(AssertionError):
        FSDPEngineConfig(strategy="native")

"""The native engine refuses a preset that sets a key it would ignore (KL, dynamic batching, offload, vLLM knobs,
overrides.verl, ...): a ConfigError naming the key, the engine and the alternative."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_support_cases import NON_DEFAULT, assert_one_line_refusal, write_preset

from gspo_cli.config.engine_registry import ENGINES
from gspo_cli.config.presets import load_preset
from gspo_cli.errors import ConfigError

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow


def test_set_but_unsupported_key_fails_with_one_line_through_the_cli(tmp_path, gspo):
    preset = write_preset(tmp_path, "kl", "extends: tiny\nalgorithm:\n  use_kl_loss: true\n  kl_loss_coef: 0.01\n")
    proc = gspo("train", "--preset", str(preset), "--dry-run")
    line = assert_one_line_refusal(proc, "algorithm.use_kl_loss", "native engine", "trainer.engine: verl")
    assert f"{preset}:3" in line  # where the preset set it
    print(line)


@pytest.mark.parametrize("key", sorted(ENGINES["native"].support.ignored))
def test_every_ignored_key_is_refused_when_set(key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as info:
        load_preset("tiny", NON_DEFAULT[key])
    assert "native engine" in info.value.message and info.value.hint


def test_engine_values_default_to_the_engines_own_and_others_are_refused(tmp_path):
    text = (Path(load_preset.__code__.co_filename).parents[2] / "presets" / "tiny.yaml").read_text()
    stripped = re.sub(r"(?m)^  (strategy: native|name: hf)\b.*\n", "", text)
    assert stripped.count("\n") == text.count("\n") - 2  # both lines gone, whatever their comments
    bare = write_preset(tmp_path, "bare", stripped)
    preset = load_preset(str(bare))
    assert (preset.actor.strategy, preset.rollout.name) == ("native", "hf")  # what `presets show --resolved` prints
    for item in ("rollout.name=vllm", "actor.strategy=fsdp2"):
        with pytest.raises(ConfigError, match="not supported by the native engine"):
            load_preset("tiny", [item])


def test_keys_left_at_their_default_pass():
    """Switching a preset's engine trips only on what it changed, not on keys spelled out at their defaults."""
    preset = load_preset("tiny", ["algorithm.use_kl_loss=false", "actor.param_offload=false", "overrides.verl=[]"])
    assert preset.trainer.engine == "native"
    with pytest.raises(ConfigError, match=r"actor\.strategy.*native engine"):
        load_preset("qwen3-0.6b-1x1", ["trainer.engine=native"])

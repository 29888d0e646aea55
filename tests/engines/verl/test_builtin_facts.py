"""A built-in model's facts come from its own config (model_facts.builtin_facts), never a "no config.json ...
download the model" warning; and the dry-run's step line says "not predicted" where the cpu profile has no verl
measurement instead of "0 s" (issue #33)."""

from __future__ import annotations

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.engines.verl import preflight
from gspo_cli.models import builtin
from gspo_cli.sizing.model_facts import TINY_VOCAB, builtin_facts, facts_for


def test_every_builtin_has_facts_before_it_is_built_and_preflight_does_not_warn(gspo_home):
    for name in builtin.names():
        facts = facts_for(f"builtin:{name}")
        assert facts is not None and facts.vocab_size == TINY_VOCAB, name
        assert facts.head_dim == builtin.shape(name)["head_dim"], name
    assert not (gspo_home / "models").exists()  # nothing was built to answer
    for preset in ("tiny-verl", "tiny-moe-verl"):
        checks = {c.name: c for c in preflight.run(load_preset(preset)).checks}
        assert "model facts" not in checks, checks["model facts"].message
        assert checks["model"].status == "info" and "builtin:" in checks["model"].message
    # the control: a path that is neither a folder nor a known Qwen3 still gets the warning
    other = load_preset("tiny-verl", ["model.path=/nowhere/some-model"])
    checks = {c.name: c for c in preflight.run(other).checks}
    assert checks["model facts"].status == "warn" and "download the model" in checks["model facts"].fix


@pytest.mark.parametrize("name", ["tiny", "tiny-qwen3-vllm", "tiny-moe"])
def test_the_build_config_agrees_with_the_built_model(gspo_home, name):
    before = builtin_facts(name)
    folder = builtin.ensure(name)
    after = builtin_facts(name)
    assert after.source == str(folder / "config.json")
    for field in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
                  "intermediate_size", "vocab_size", "tie_word_embeddings", "num_experts", "num_experts_per_tok",
                  "moe_intermediate_size"):
        assert getattr(before, field) == getattr(after, field), field
    assert before.params == after.params


def test_the_dry_run_line_is_not_zero_seconds(gspo_home):
    from gspo_cli.plan import dry_run_line

    line = dry_run_line(load_preset("tiny-verl"))
    assert line.startswith("Predicted step (cpu): not predicted: the cpu profile's verl factors are priors")
    assert "2.2-4.3 s" in line and " 0 s" not in line
    # the control: the same preset on a profile with fitted verl factors gets a figure, never "0 s"
    a3 = dry_run_line(load_preset("tiny-verl", ["cluster.profile=a3"]))
    assert a3.startswith("Predicted step (a3, assumed lengths): ") and not a3.startswith(
        "Predicted step (a3, assumed lengths): 0 s")


def test_a_profile_calibrated_on_a_verl_run_predicts_again(gspo_home):
    from gspo_cli.sizing import profiles

    cpu = profiles.get("cpu")
    assert cpu is not None and cpu.verl_unmeasured
    profiles.save_user("cpu-verl", cpu, {"step_fixed_s": 2.5}, run="tiny-verl-x")
    assert profiles.get("cpu-verl").verl_unmeasured == ""
    profiles.save_user("cpu-native", cpu, {"native_mfu_train": 0.3}, run="tiny-x")
    assert profiles.get("cpu-native").verl_unmeasured == cpu.verl_unmeasured

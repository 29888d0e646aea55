"""verl configuration traps (gspo_cli/engines/verl/traps.py) on the built-in presets and on the settings the
threads report: each refused or warned with its signature id, and the built-in presets clean."""

from __future__ import annotations

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.engines.verl import preflight, traps

A = "actor_rollout_ref.actor"
VERL_PRESETS = ["qwen3-0.6b-1x1", "qwen3-8b-1x16", "qwen3-8b-2x8", "qwen3-32b-4x16", "qwen3-32b-4x8-h100"]


def _by_status(preset, status):
    return [c for c in traps.checks(preset) if c.status == status]


@pytest.mark.parametrize("name", VERL_PRESETS)
def test_builtin_presets_set_loss_agg_mode_and_pass(name):
    preset = load_preset(name)
    assert "loss_agg_mode" in preset.algorithm.model_fields_set  # written in the preset, not left to a default
    assert _by_status(preset, "error") == [] and _by_status(preset, "warn") == []
@pytest.mark.slow


def test_compile_always_sets_loss_agg_mode():
    from gspo_cli.engines.verl.compile import compile_preset

    for name in VERL_PRESETS:
        compiled = compile_preset(load_preset(name), run_dir="/tmp/r", train_file="t.parquet", val_file="v.parquet")
        assert f"{A}.loss_agg_mode=seq-mean-token-mean" in compiled.overrides, name


def test_token_mean_via_overrides_is_refused():
    preset = load_preset("qwen3-0.6b-1x1", [f"overrides.verl=[{A}.loss_agg_mode=token-mean]"])
    (err,) = _by_status(preset, "error")
    assert "[gspo-token-mean]" in err.message and "overrides.verl" in err.message


def test_deleting_loss_agg_mode_falls_back_to_verls_token_mean_and_is_refused():
    preset = load_preset("qwen3-0.6b-1x1", [f"overrides.verl=[~{A}.loss_agg_mode]"])
    (err,) = _by_status(preset, "error")
    assert "verl's default" in err.message


def test_token_mean_written_in_the_preset_is_a_warning_not_a_refusal():
    preset = load_preset("qwen3-0.6b-1x1", ["algorithm.loss_agg_mode=token-mean"])
    assert _by_status(preset, "error") == []
    assert any("[gspo-token-mean]" in c.message for c in _by_status(preset, "warn"))


def test_token_mean_is_fine_for_the_vanilla_loss():
    preset = load_preset("qwen3-0.6b-1x1", ["algorithm.loss_mode=vanilla", "algorithm.loss_agg_mode=token-mean",
                                            "algorithm.clip_ratio_low=0.2", "algorithm.clip_ratio_high=0.28"])
    assert _by_status(preset, "error") == []


def test_bypass_mode_in_the_legacy_trainer_with_gspo_is_refused():
    preset = load_preset("qwen3-0.6b-1x1", ["rollout.calculate_log_probs=true",
                                            "overrides.verl=[algorithm.rollout_correction.bypass_mode=true,"
                                            "trainer.use_v1=false]"])
    (err,) = _by_status(preset, "error")
    assert "[gspo-bypass-mode]" in err.message and "apply_bypass_mode" in err.message


@pytest.mark.parametrize("sets", [["algorithm.clip_ratio_low=0.2", "algorithm.clip_ratio_high=0.28"],
                                  ["overrides.verl=[actor_rollout_ref.actor.clip_ratio_high=0.2]"]])
def test_grpo_sized_clip_ratios_with_gspo_are_refused(sets):
    (err,) = _by_status(load_preset("qwen3-0.6b-1x1", sets), "error")
    assert "[gspo-ppo-clip]" in err.message and "trl#3834" in err.message


def test_inert_keys_are_listed_with_the_live_key_and_warned_when_they_differ():
    preset = load_preset("qwen3-32b-4x16")
    (info,) = [c for c in traps.checks(preset) if c.name == "inert verl keys"]
    for key in (f"{A}.grad_clip -> {A}.optim.clip_grad", f"{A}.clip_ratio_c", "actor_rollout_ref.ref.*",
                f"{A}.entropy_checkpointing"):
        assert key in info.message
    over = load_preset("qwen3-32b-4x16", [f"overrides.verl=[{A}.grad_clip=0.5,actor_rollout_ref.nccl_timeout=1800]"])
    warned = {c.name: c.message for c in _by_status(over, "warn")}
    assert "optim.clip_grad" in warned["inert grad_clip"] and "= 1.0" in warned["inert grad_clip"]
    assert "HCCL_CONNECT_TIMEOUT" in warned["inert nccl_timeout"]


def test_same_value_on_the_inert_and_the_live_key_is_not_warned():
    preset = load_preset("qwen3-32b-4x16", [f"overrides.verl=[{A}.grad_clip=1.0]"])
    assert _by_status(preset, "warn") == []


def test_preflight_refuses_a_trap():
    preset = load_preset("qwen3-0.6b-1x1", ["algorithm.clip_ratio_high=0.28"])
    report = preflight.evaluate(preset, None, None)
    assert not report.ok and report.errors[0].name == "GSPO clip range"


def test_native_presets_are_not_judged_by_verl_traps():
    assert traps.checks(load_preset("tiny")) == []

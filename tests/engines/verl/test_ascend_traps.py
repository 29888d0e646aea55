"""vLLM-Ascend colocated-rollout traps (gspo_cli/engines/verl/ascend_traps.py) on qwen3-30b-a3b-2x16 and Qwen3-30B-A3B's
published shape: each rule fires on the setting its source names and stays quiet on the control that avoids it;
the run-stage signature recognises vllm-ascend's own message and nothing else of the signature excerpts."""

from __future__ import annotations

from pathlib import Path

import pytest

from gspo_cli.config import presets
from gspo_cli.config.schema import EnvSection, OverridesSection
from gspo_cli.engines.verl import ascend_traps, preflight
from gspo_cli.jobs.failures import classify
from gspo_cli.sizing.model_facts import model_facts
from gspo_cli.sizing.report import DataFacts

FIX = Path(__file__).resolve().parents[2] / "fixtures"
MOE = "qwen3-30b-a3b-2x16"
NZ_KEY = "+actor_rollout_ref.rollout.engine_kwargs.vllm.additional_config.weight_nz_mode"


@pytest.fixture(scope="module")
def moe():
    return model_facts(str(FIX / "qwen3-30b-a3b"))


def _with(preset, *, env=None, verl=None, vllm_ascend=None):
    update = {}
    if env is not None or vllm_ascend is not None:
        vars_ = {**preset.env.vars, **(env or {})}
        update["env"] = EnvSection(**{**preset.env.model_dump(), "vars": vars_,
                                      "vllm_ascend": vllm_ascend or preset.env.vllm_ascend})
    if verl is not None:
        update["overrides"] = OverridesSection(verl=[*preset.overrides.verl, *verl])
    return preset.model_copy(update=update)


def _by_name(checks):
    return {c.name: c for c in checks}


def test_nz_on_with_a_sleeping_rollout_is_refused(moe):
    preset = _with(presets.load_preset(MOE), env={"VLLM_ASCEND_ENABLE_NZ": "1"})
    check = _by_name(ascend_traps.checks(preset, moe))["NZ weight format and sleep"]
    assert check.status == "error" and "[ascend-nz-wake-up]" in check.message
    assert "VLLM_ASCEND_ENABLE_NZ" in check.fix
    report = preflight.evaluate(preset, moe, DataFacts(train_rows=17373, val_rows=30))
    assert "NZ weight format and sleep" in {c.name for c in report.errors}


@pytest.mark.parametrize("env, verl, status", [
    ({"VLLM_ASCEND_ENABLE_NZ": "0"}, [], "ok"),                               # the setting that avoids it
    ({}, [], "ok"),                                                           # unset: verl 0.9.1 sets 0
    ({"VLLM_ASCEND_ENABLE_NZ": "1"}, [f"{NZ_KEY}=0"], "ok"),                  # additional_config wins
    ({"VLLM_ASCEND_ENABLE_NZ": "2"}, ["actor_rollout_ref.rollout.free_cache_engine=False"], "info"),  # no wake_up
])
def test_nz_controls_do_not_fire(moe, env, verl, status):
    preset = _with(presets.load_preset(MOE), env=env, verl=verl)
    check = _by_name(ascend_traps.checks(preset, moe))["NZ weight format and sleep"]
    assert check.status == status, check.message


def test_nz_from_additional_config_is_refused_even_with_the_variable_off(moe):
    preset = _with(presets.load_preset(MOE), env={"VLLM_ASCEND_ENABLE_NZ": "0"}, verl=[f"{NZ_KEY}=1"])
    assert _by_name(ascend_traps.checks(preset, moe))["NZ weight format and sleep"].status == "error"


def test_nz_rule_is_keyed_to_the_releases_whose_wake_up_raises(moe):
    old = _with(presets.load_preset(MOE), env={"VLLM_ASCEND_ENABLE_NZ": "1"}, vllm_ascend="0.9.1")
    assert "NZ weight format and sleep" not in _by_name(ascend_traps.checks(old, moe))
    post = _with(presets.load_preset(MOE), env={"VLLM_ASCEND_ENABLE_NZ": "1"}, vllm_ascend="0.23.0.post1")
    assert _by_name(ascend_traps.checks(post, moe))["NZ weight format and sleep"].status == "error"


def test_graph_mode_on_moe_warns_and_eager_does_not(moe):
    graphs = _by_name(ascend_traps.checks(presets.load_preset(MOE), moe))["ACL graphs and MoE weight sync"]
    assert graphs.status == "warn" and "[ascend-moe-graph-reload]" in graphs.message
    assert "enforce_eager: true" in graphs.fix
    eager = _by_name(ascend_traps.checks(presets.load_preset(MOE, ["rollout.enforce_eager=true"]), moe))
    assert eager["ACL graphs and MoE weight sync"].status == "ok"


def test_graph_rule_needs_an_moe_model_and_an_npu():
    dense = model_facts("Qwen/Qwen3-32B")
    names = _by_name(ascend_traps.checks(presets.load_preset("qwen3-32b-4x16"), dense))
    assert "ACL graphs and MoE weight sync" not in names and "NZ weight format and sleep" in names
    assert ascend_traps.checks(presets.load_preset("qwen3-32b-4x8-h100"), dense) == []


@pytest.mark.parametrize("verl, status", [(None, "info"), ("0.9.1", "info"), ("0.9.2.dev0", "info"),
                                          ("0.10.0", "warn"), ("0.8.0", "warn")])
def test_sleep_level_rule_is_keyed_to_the_verl_version(moe, verl, status):
    check = _by_name(ascend_traps.checks(presets.load_preset(MOE), moe, {"verl": verl}))["rollout sleep level (EP)"]
    assert check.status == status
    assert ("[ascend-ep-sleep-level2]" in check.message) == (status == "warn")


def test_sleep_level_rule_is_quiet_without_expert_parallelism(moe):
    preset = presets.load_preset(MOE, ["rollout.expert_parallel_size=1"])
    assert "rollout sleep level (EP)" not in _by_name(ascend_traps.checks(preset, moe, {"verl": "0.10.0"}))


def test_run_signature_recognises_vllm_ascends_message():
    lines = (FIX / "signatures" / "nz_wake_up_vllm_ascend_worker.log").read_text().splitlines()
    kind, cause = classify(1, [line for line in lines if not line.startswith("#")], made_progress=True)
    assert kind == "config" and cause.endswith("[run-nz-wake-up]"), cause


def test_run_signature_does_not_match_the_other_excerpts():
    for log in (FIX / "signatures").glob("*.log"):
        if log.name.startswith("nz_wake_up"):
            continue
        _, cause = classify(1, log.read_text().splitlines(), made_progress=True)
        assert "[run-nz-wake-up]" not in cause, log.name


def test_wake_up_transpose_is_an_info_line_on_moe_only(moe):
    info = _by_name(ascend_traps.checks(presets.load_preset(MOE), moe))["wake_up expert transpose"]
    assert info.status == "info" and "#13012" in info.message and "0.23.0" in info.message
    dense = model_facts("Qwen/Qwen3-32B")
    assert "wake_up expert transpose" not in _by_name(ascend_traps.checks(presets.load_preset("qwen3-32b-4x16"), dense))

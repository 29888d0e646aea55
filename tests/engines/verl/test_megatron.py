"""verl's Megatron route (`actor.strategy: megatron`, config/megatron.py -> engines/verl/megatron.py): the preset
section's validation, the compiled overrides, verl's own schema check of them (model_engine=megatron), routing
replay compiled on this route and refused on the others, the Megatron preflight and memory model."""

from __future__ import annotations

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl import megatron_checks, schema_check
from gspo_cli.engines.verl.compile import compile_preset
from gspo_cli.errors import ConfigError
from gspo_cli.sizing import megatron_memory, memory, memory_checks
from gspo_cli.sizing.model_facts import facts_for

PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")
NIGHTLY = "nightly-gspo-qwen3-30b-a3"
A = "actor_rollout_ref.actor"


def compiled(sets=(), name=NIGHTLY):
    return compile_preset(presets.load_preset(name, list(sets)), **PATHS)


def keyed(c) -> dict[str, str]:
    return {o.split("=", 1)[0].lstrip("+"): o.split("=", 1)[1] for o in c.overrides}


def refused(sets, name=NIGHTLY) -> str:
    with pytest.raises(ConfigError) as err:
        presets.load_preset(name, list(sets))
    text = str(err.value.message)
    assert "\n" not in text
    return text


# ------------------------------------------------------------------ compile


def test_the_megatron_preset_compiles_to_verls_megatron_engine_keys():
    c = compiled()
    k = keyed(c)
    assert k["model_engine"] == "megatron" and k[f"{A}.strategy"] == "megatron"
    assert (k[f"{A}.megatron.tensor_model_parallel_size"], k[f"{A}.megatron.expert_model_parallel_size"],
            k[f"{A}.megatron.expert_tensor_parallel_size"]) == ("2", "8", "1")
    assert k["actor_rollout_ref.ref.megatron.expert_model_parallel_size"] == "8"  # the ref mirrors the actor
    assert k[f"{A}.megatron.param_offload"] == "True" and k[f"{A}.megatron.optimizer_offload"] == "True"
    assert k[f"{A}.megatron.router_replay.mode"] == "disabled"
    # a key verl's default lacks is appended ('+'), one it has is set plainly (Hydra refuses the other spelling)
    assert f"+{A}.megatron.override_transformer_config.moe_router_dtype=fp32" in c.overrides
    assert f"{A}.megatron.override_transformer_config.recompute_granularity=full" in c.overrides
    assert not [o for o in c.overrides if "fsdp_config" in o or "ulysses" in o]  # no FSDP node on this route
    assert c.origins[f"{A}.megatron.expert_model_parallel_size"] == "actor.megatron.expert_model_parallel_size"
    assert c.origins["model_engine"] == "actor.strategy"


def test_verls_schema_check_passes_the_megatron_config_and_needs_model_engine(tmp_path, monkeypatch):
    monkeypatch.setenv("GSPO_HOME", str(tmp_path))
    loaded = presets.load(NIGHTLY, [])
    c = compile_preset(loaded.preset, **PATHS)
    result = schema_check.check(c, loaded, use_cache=False)
    assert result.validated and result.verl_version.startswith("0.9")
    # control: without model_engine=megatron verl composes its FSDP actor, which has no `megatron` node
    c.overrides.remove("model_engine=megatron")
    with pytest.raises(ConfigError, match=r"rejected override `actor_rollout_ref\.actor\.megatron\.[a-z_.]+=.*\(compose\)"):
        schema_check.check(c, loaded, full=False, use_cache=False)


# ------------------------------------------------------------------ routing replay


@pytest.mark.parametrize("mode", ["R2", "R3"])
def test_routing_replay_compiles_to_verls_key_and_composes(mode):
    c = compiled([f"actor.megatron.router_replay={mode}"])
    k = keyed(c)
    assert k[f"{A}.megatron.router_replay.mode"] == mode
    # R3 replays the rollout's routes, which vLLM returns only when asked; R2 must not ask (verl refuses both)
    assert k.get("actor_rollout_ref.rollout.enable_rollout_routing_replay") == ("True" if mode == "R3" else None)
    cfg = schema_check.compose(c.overrides)
    assert cfg.actor_rollout_ref.actor.megatron.router_replay.mode == mode
    assert cfg.actor_rollout_ref.rollout.enable_rollout_routing_replay is (mode == "R3")


def test_routing_replay_is_refused_on_fsdp_and_native_in_one_line():
    fsdp = refused(["actor.megatron.router_replay=R3"], "qwen3-30b-a3b-2x16")
    assert "actor.megatron.router_replay R3 needs actor.strategy: megatron (it is fsdp2)" in fsdp
    assert "workers/engine_workers.py:496-505" in fsdp
    native = refused(["actor.megatron.router_replay=R2"], "tiny-moe")
    assert "(it is native)" in native and "the native engine has no routing replay" in native
    # control: the same setting on the Megatron route loads
    assert presets.load_preset(NIGHTLY, ["actor.megatron.router_replay=R3"]).actor.megatron.router_replay == "R3"


def test_r2_with_the_rollouts_recorded_routes_is_refused():
    text = refused(["actor.megatron.router_replay=R2", "rollout.moe_load_balance_metrics_interval=1"])
    assert "R2 cannot run with rollout.moe_load_balance_metrics_interval" in text


# ------------------------------------------------------------------ the preset section


@pytest.mark.parametrize("sets,words", [
    # unknown keys: errors naming their path (the control: the same sections' known keys load in the preset)
    (["actor.megatron.tensor_parallel=2"], "unknown key 'actor.megatron.tensor_parallel'"),
    (["actor.megatron.override_transformer_config.moe_aux_loss_coeff=0.1"],
     "unknown key 'actor.megatron.override_transformer_config.moe_aux_loss_coeff'"),
    (["actor.megatron.override_transformer_config.recompute_num_layers=null"],
     "actor.megatron.override_transformer_config: recompute_granularity full needs recompute_method"),
    (["actor.megatron.override_transformer_config.recompute_granularity=selective"],
     "actor.megatron.override_transformer_config: recompute_method and recompute_num_layers are read only with"),
    (["actor.ulysses_sequence_parallel_size=2"], "actor.ulysses_sequence_parallel_size is an FSDP setting"),
    (["model.dtype=float32"], "model.dtype float32: verl 0.9.1's Megatron engine trains in bfloat16 or float16"),
    (["actor.megatron.expert_model_parallel_size=0"], "actor.megatron.expert_model_parallel_size: Input should be"),
])
def test_megatron_section_errors_name_the_key(sets, words):
    text = refused(sets)
    assert words in text, text


def test_megatron_section_on_the_fsdp_route_is_refused():
    text = refused(["actor.megatron.tensor_model_parallel_size=2"], "qwen3-8b-1x16")
    assert "actor.megatron is set but actor.strategy is fsdp2" in text


# ------------------------------------------------------------------ preflight and memory


def test_preflight_checks_the_megatron_layout():
    m = facts_for("Qwen/Qwen3-30B-A3B")
    ok = {c.name: c for c in megatron_checks.checks(presets.load_preset(NIGHTLY), m)}
    assert all(c.status in ("ok", "info") for c in ok.values()), ok
    assert "TP 2 x PP 1 x DP 8; experts: EP 8 x ETP 1 x PP 1 x expert DP 2" in ok["Megatron layout"].message
    bad = {c.name: c for c in megatron_checks.checks(presets.load_preset(
        NIGHTLY, ["actor.megatron.expert_model_parallel_size=3", "actor.megatron.tensor_model_parallel_size=3"]), m)}
    assert bad["Megatron EP | experts"].status == "error" and "does not divide 128 experts" in bad["Megatron EP | experts"].message
    assert bad["Megatron TP x PP | world"].status == "error"
    assert bad["Megatron TP | KV heads"].status == "error"
    assert megatron_checks.checks(presets.load_preset("qwen3-30b-a3b-2x16"), m) == []  # FSDP route: none


def test_megatron_memory_shards_by_model_parallel_sizes_not_by_world():
    m = facts_for("Qwen/Qwen3-30B-A3B")
    preset = presets.load_preset(NIGHTLY)
    shard = megatron_memory.rank_params(preset, m)
    experts = m.moe_layers * m.num_experts * m.expert_params
    assert shard["weights"] == pytest.approx((m.params - experts) / 2 + experts / 8)
    assert shard["optimizer"] == pytest.approx(m.params / 16)  # the distributed optimizer: once per DP group
    est = memory_checks.phase_memory(preset, m, 64 * 2**30)
    update = est.phases["update"].parts
    assert update["weights_bf16"] == int(2 * shard["weights"]) and update["grad_buffer_fp32"] == int(4 * shard["weights"])
    # more expert parallelism: fewer experts per rank; the FSDP estimate of the same job shards over the world
    ep16 = megatron_memory.rank_params(presets.load_preset(NIGHTLY, ["actor.megatron.expert_model_parallel_size=16"]), m)
    assert ep16["weights"] < shard["weights"]
    fsdp = memory.estimate(presets.load_preset("qwen3-30b-a3b-2x16"), m, 64 * 2**30).phases["update"].parts
    assert "weights_bf16" not in fsdp and fsdp["params_fp32"] == int(4 * m.params / 32)


def test_token_level_loss_on_megatron_warns_unless_routing_replay_is_on():
    from gspo_cli.engines.verl import moe_checks

    m = facts_for("Qwen/Qwen3-30B-A3B")
    name = "MoE token-level loss without routing replay"
    off = {c.name: c for c in moe_checks.checks(presets.load_preset(NIGHTLY, ["algorithm.loss_mode=vanilla"]), m)}
    assert off[name].status == "warn" and "router_replay disabled" in off[name].message
    on = {c.name for c in moe_checks.checks(presets.load_preset(
        NIGHTLY, ["algorithm.loss_mode=vanilla", "actor.megatron.router_replay=R2"]), m)}
    assert name not in on

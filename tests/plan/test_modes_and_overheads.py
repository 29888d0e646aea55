"""The step model's per-engine fixed cost, amortised validation / checkpoints, and verl's V1 async trainer modes:
arithmetic written out by hand, preflight's rules (verl's own start-up assertions) and the compiled overrides
checked by verl's own config schema."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl import preflight, schema_check
from gspo_cli.engines.verl.compile import compile_preset
from gspo_cli.plan import model
from gspo_cli.plan.calibration import QWEN25_MATH_7B
from gspo_cli.plan.workload import Lengths, Workload
from gspo_cli.sizing.model_facts import QWEN3_TABLE
from gspo_cli.sizing.profiles import BUILTIN, NATIVE_STEP_FIXED_S

H20, A3 = BUILTIN["h20"], BUILTIN["a3"]
PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")


def work(**kw) -> Workload:
    base = Workload(QWEN25_MATH_7B, 4, 8, "verl", "vllm", 512, 16, 2048, 28672,
                    Lengths(0.05, 0.07, 0.05, "test lengths"), tp=4, sp=4, gpu_memory_utilization=0.8,
                    micro_tokens=61440, mini_batches=16)
    return replace(base, **kw)


def test_the_fixed_cost_per_step_belongs_to_the_engine():
    verl, native = model.predict(work(), H20), model.predict(work(engine="native", rollout="hf"), H20)
    assert verl.phases["other"] == H20.step_fixed_s == 5.0
    assert native.phases["other"] == NATIVE_STEP_FIXED_S < 0.05  # measured from the native engine's timing_s


def test_validation_and_checkpoints_are_spread_over_their_frequency():
    w = work(save_freq=20, test_freq=10, val_trajectories=30 * 16)
    pred = model.predict(w, H20)
    # a checkpoint: 12 B per parameter (fp32 params + AdamW) over 32 ranks, 8 ranks per node share its link
    per_node = 12 * QWEN25_MATH_7B.params / 32 * 8
    assert pred.phases["save_checkpoint"] == pytest.approx(per_node / H20.ckpt_write_bytes_s / 20)
    # validation: one generation pass over 30 prompts x n 16, every 10 steps
    val_gen = model.gen_s(replace(w, prompts=480, n=1), H20)[0]
    assert pred.phases["testing"] == pytest.approx(val_gen / 10)
    assert model.predict(work(), H20).phases["testing"] == 0 == model.predict(work(), H20).phases["save_checkpoint"]


def test_colocate_async_stops_waiting_for_the_longest_response():
    sync, colo = model.predict(work(), H20), model.predict(work(mode="colocate_async"), H20)
    _, detail, _ = model.gen_s(work(), H20)
    resumed = detail["gen_tail_tokens"] / detail["gen_concurrency"] * detail["gen_busy_step_s"]
    assert colo.phases["gen"] == pytest.approx(sync.phases["gen"] - detail["gen_tail_s"] + resumed)
    assert colo.step_s < sync.step_s and colo.staleness == 1 and sync.staleness == 0
    assert colo.phases["update_actor"] == sync.phases["update_actor"]  # same devices train as before


def test_separate_async_overlaps_generation_with_training_on_split_pools():
    w = work(mode="separate_async", parameter_sync_step=4)
    pred = model.predict(w, H20)
    gen_side, train_side = model.split_pools(w)
    assert (gen_side.nodes, train_side.nodes) == (2, 2) and gen_side.devices + train_side.devices == 32
    rollout = pred.phases["gen"] + pred.phases["reward"]
    training = pred.phases["old_log_prob"] + pred.phases["ref"] + pred.phases["update_actor"]
    assert pred.hidden_s == pytest.approx(min(rollout, training))
    assert pred.step_s == pytest.approx(max(rollout, training) + pred.phases["update_weights"] + pred.phases["other"])
    assert pred.phases["update_actor"] == pytest.approx(model.update_actor_s(train_side, H20))
    assert pred.staleness == 4
    one_node = model.split_pools(replace(w, nodes=1, rollout_share=0.25))
    assert (one_node[0].devices_per_node, one_node[1].devices_per_node) == (2, 6)


def test_preflight_holds_verls_separate_async_rules_and_states_the_risk():
    def checks(sets):
        preset = presets.load_preset("qwen3-32b-4x16", sets)
        return {c.name: c for c in preflight.evaluate(preset, QWEN3_TABLE["32b"], None).checks}

    # verl asserts train_batch_size == parameter_sync_step x ppo_mini_batch_size (trainer_separate_async.py)
    bad = checks(["trainer.mode=separate_async", "trainer.parameter_sync_step=8"])["async mode"]
    assert bad.status == "error" and "256 != 8 x 64" in bad.message and "parameter_sync_step=4" in bad.fix
    ok = checks(["trainer.mode=separate_async", "trainer.parameter_sync_step=4"])
    assert "async mode" not in ok and ok["async pools"].status == "ok"
    assert ok["async pools"].message == "2 node(s) x 16 generate, 32 device(s) train"
    assert ok["async staleness"].status == "warn" and "up to 4 updates" in ok["async staleness"].message
    one_side = checks(["trainer.mode=separate_async", "trainer.parameter_sync_step=4", "trainer.rollout_share=1"])
    assert one_side["async pools"].status == "error"
    assert checks(["trainer.mode=colocate_async"])["async staleness"].status == "warn"
    assert not {"async mode", "async pools", "async staleness"} & set(checks([]))


def test_modes_compile_to_verls_v1_keys_and_sync_compiles_to_nothing():
    def overrides(sets):
        return compile_preset(presets.load_preset("qwen3-32b-4x16", sets), **PATHS).overrides

    assert not [o for o in overrides([]) if "trainer.v1" in o or "rollout.nnodes" in o]
    sep = overrides(["trainer.mode=separate_async", "trainer.parameter_sync_step=4"])
    assert "trainer.v1.trainer_mode=separate_async" in sep
    assert "trainer.v1.separate_async.parameter_sync_step=4" in sep
    assert "trainer.nnodes=2" in sep and "trainer.nnodes=4" not in sep  # each key once: Hydra refuses repeats
    assert "actor_rollout_ref.rollout.nnodes=2" in sep and "actor_rollout_ref.rollout.n_gpus_per_node=16" in sep
    assert "actor_rollout_ref.rollout.checkpoint_engine.backend=hccl" in sep


@pytest.mark.parametrize("mode", ["colocate_async", "separate_async"])
def test_verls_own_schema_accepts_the_compiled_modes(mode):
    loaded = presets.load("qwen3-32b-4x16", [f"trainer.mode={mode}", "trainer.parameter_sync_step=4"])
    verdict = schema_check.check(compile_preset(loaded.preset, **PATHS), loaded, use_cache=False)
    assert verdict is not None


def test_the_native_engine_refuses_async_modes():
    from gspo_cli.errors import ConfigError

    with pytest.raises(ConfigError, match="trainer.mode"):
        presets.load_preset("tiny", ["trainer.mode=colocate_async"])


def test_validation_size_comes_from_the_prepared_manifest(gspo_home):
    import json

    from gspo_cli.data.manifest import manifest_path
    from gspo_cli.plan.workload import from_preset

    preset = presets.load_preset("qwen3-32b-4x16")
    facts = QWEN3_TABLE["32b"]
    assert from_preset(preset, facts).val_trajectories == 0  # not prepared yet: validation not counted
    path = manifest_path(preset.data.val.source, preset)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"outputs": {"val": {"rows": 30}}}))
    assert from_preset(preset, facts).val_trajectories == 30 * preset.rollout.val.n

"""Each preflight rule fires on a preset made wrong on purpose, with the message it prints."""

from __future__ import annotations

import json

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl import preflight
from gspo_cli.errors import ConfigError
from gspo_cli.sizing.memory_checks import estimate_memory
from gspo_cli.sizing.model_facts import QWEN3_TABLE, GiB, facts_for, model_facts
from gspo_cli.sizing.report import DataFacts

REF = "qwen3-32b-4x16"
DATA_OK = DataFacts(train_rows=17398, val_rows=30)


def report(sets, name=REF, model=None, data=DATA_OK):
    preset = presets.load_preset(name, sets)
    facts = model if model is not None else model_facts(preset.model.path)
    return preflight.evaluate(preset, facts, data)


def fired(rep, name):
    hits = [c for c in rep.checks if c.name == name]
    assert hits, f"no check named {name!r}: {[c.name for c in rep.checks]}"
    return hits[0]


def test_reference_preset_has_no_errors_with_prepared_data():
    rep = report([])
    assert rep.ok, [(c.name, c.message) for c in rep.errors]
    assert rep.estimates["steps_per_epoch"] == 17398 // 256 == 67
    assert rep.estimates["total_steps"] == 670
    assert rep.estimates["trajectories_per_step"] == 4096 and rep.estimates["optimizer_steps_per_step"] == 4


# (sets, check name, status, text in the message, text in the fix)
CASES = [
    (["cluster.nnodes=1", "cluster.devices_per_node=6"], "world % rollout TP", "error", "world 6 is not divisible by rollout.tensor_parallel_size 4", "divides 6"),
    (["cluster.devices_per_node=6", "rollout.tensor_parallel_size=2", "actor.ulysses_sequence_parallel_size=5"],
     "world % SP", "error", "world 24 is not divisible by actor.ulysses_sequence_parallel_size 5", "divides 24"),
    (["rollout.tensor_parallel_size=16"], "TP | KV heads", "ok", "rollout TP 16 is a multiple of 8 KV heads: vLLM holds each KV head on 2 ranks", None),
    (["rollout.tensor_parallel_size=16", "model.path=Qwen/Qwen3-30B-A3B"], "TP | KV heads", "ok", "multiple of 4 KV heads", None),
    (["rollout.tensor_parallel_size=8", "cluster.devices_per_node=12", "cluster.nnodes=2"], "TP | KV heads", "ok", "divides 8 KV heads", None),
    (["actor.ulysses_sequence_parallel_size=8", "cluster.devices_per_node=12", "cluster.nnodes=2", "rollout.tensor_parallel_size=3"],
     "TP | attention heads", "error", "rollout TP 3 does not divide 64 attention heads", "divides 64"),
    (["actor.ulysses_sequence_parallel_size=16", "cluster.devices_per_node=12", "actor.ppo_max_token_len_per_device=640"],
     "SP | attention heads", "ok", "Ulysses SP 16 divides 64", None),
    (["actor.ulysses_sequence_parallel_size=3", "cluster.devices_per_node=12", "cluster.nnodes=1", "rollout.tensor_parallel_size=4",
      "actor.ppo_max_token_len_per_device=3414"],
     "SP | attention heads", "error", "Ulysses SP 3 does not divide 64 attention heads", "divides 64"),
    (["data.train_batch_size=3", "actor.ppo_mini_batch_size=1", "rollout.n=5"], "batch x n % DP", "error",
     "train_batch_size x n = 3 x 5 = 15 is not divisible by the DP size 16 (= world 64 / SP 4)", "multiple of 16"),
    # DP 16 divides 2 x 8 = 16 trajectories, but verl's validate_config wants a multiple of the world (64).
    (["data.train_batch_size=2", "actor.ppo_mini_batch_size=1", "rollout.n=8"], "batch x n % world", "error",
     "train_batch_size x n = 2 x 8 = 16 is not divisible by the world size 64", "multiple of 64"),
    (["data.train_batch_size=16", "actor.ppo_mini_batch_size=1", "rollout.n=8"], "mini-batch x n % DP", "error",
     "ppo_mini_batch_size x n = 8 is not divisible by the DP size 16", "multiple of 16"),
    (["rollout.enable_chunked_prefill=false", "rollout.max_num_batched_tokens=8192"], "batched tokens >= prompt+response", "error",
     "max_num_batched_tokens 8192 vs prompt+response 10240", ">= 10240"),
    (["rollout.update_weights_bucket_megabytes=2048"], "weight-sync bucket >= fp32 embedding", "error",
     "2048 MB vs embedding 151936 x 5120 x 4 B = 2968 MB", ">= 2968"),
    (["actor.ppo_max_token_len_per_device=2048"], "max tokens per device >= (prompt+response)/SP", "error",
     "ppo_max_token_len_per_device 2048 vs (2048+8192)/4 = 2560", ">= 2560"),
    (["actor.use_dynamic_bsz=false"], "micro-batch size", "error",
     "use_dynamic_bsz is off and ppo_micro_batch_size_per_device is unset", "ppo_micro_batch_size_per_device"),
    # 32B with no offload on 8 A2 cards: 32.8B x 16 B / 8 = 61 GiB of weights, grads and AdamW per device.
    (["cluster.nnodes=1", "cluster.devices_per_node=8", "cluster.profile=a2-910b", "actor.param_offload=false",
      "actor.optimizer_offload=false", "data.train_batch_size=64", "actor.ppo_mini_batch_size=16"],
     "actor memory", "error", "of 64.0 GiB (Atlas A2 910B)", "param_offload"),
    (["rollout.tensor_parallel_size=1"], "rollout memory", "error", "weights / TP 1 = 61.0 GiB do not fit", "tensor_parallel_size"),
    (["data.max_response_length=1040000", "actor.ppo_max_token_len_per_device=260512", "rollout.max_num_batched_tokens=2000000"],
     "rollout memory", "error", "= 0 concurrent full-length", "gpu_memory_utilization"),
    (["cluster.profile=mystery"], "device memory", "warn", "cluster.profile 'mystery' is not one of a3, a2-910b, h100, h200", "cluster.profile"),
    (["cluster.profile=h200"], "rollout memory", "ok", "(16 replicas)", None),
    (["cluster.device=cpu"], "device", "info", "verl runs on gspo's CPU platform plugin", "make engine"),
    (["model.path=/nowhere/custom-model"], "model facts", "warn", "not a known Qwen3 size", "local folder"),
]


@pytest.mark.parametrize("sets,name,status,text,fix", CASES, ids=[f"{c[1]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_rule_fires(sets, name, status, text, fix):
    check = fired(report(sets), name)
    assert check.status == status, check
    assert text in check.message, check.message
    if fix is not None:
        assert fix in (check.fix or ""), check.fix
    print(f"{status}: {name}: {check.message} (fix: {check.fix})")


def test_rules_the_schema_enforces_before_preflight():
    # mini-batch > batch and batch not a multiple of mini-batch never reach preflight: the preset schema refuses.
    with pytest.raises(ConfigError, match="ppo_mini_batch_size=512 is larger than data.train_batch_size=256"):
        presets.load_preset(REF, ["actor.ppo_mini_batch_size=512"])
    with pytest.raises(ConfigError, match="not a multiple of actor.ppo_mini_batch_size=48"):
        presets.load_preset(REF, ["actor.ppo_mini_batch_size=48"])


def test_missing_data_is_an_error_with_the_fix():
    preset = presets.load_preset(REF)
    rep = preflight.run(preset)  # empty $GSPO_HOME: nothing prepared
    check = fired(rep, "prepared data")
    assert check.status == "error"
    assert "dapo-math-17k" in check.message and "not prepared" in check.message
    assert check.fix == "run: gspo prepare-data --preset qwen3-32b-4x16"
    # the rest of the table is still complete
    assert fired(rep, "rollout memory").status == "ok"


def test_steps_per_epoch_from_manifest_and_too_small_data():
    rep = report(["trainer.total_epochs=3"], data=DataFacts(train_rows=1000, val_rows=30))
    check = fired(rep, "steps per epoch")
    assert check.status == "info" and "1000 train rows / batch 256 = 3 steps per epoch, 9 steps in total" in check.message
    rep = report([], data=DataFacts(train_rows=100, val_rows=30))
    assert fired(rep, "steps per epoch").status == "error"


def test_model_facts_from_local_config_json(tmp_path):
    cfg = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 3,
           "intermediate_size": 128, "vocab_size": 1000, "tie_word_embeddings": True}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    facts = model_facts(str(tmp_path))
    assert facts.source.endswith("config.json") and facts.num_key_value_heads == 3 and facts.head_dim == 64 // 6
    rep = report([f"model.path={tmp_path}"])
    check = fired(rep, "TP | KV heads")
    assert check.status == "error" and "rollout TP 4 does not divide 3 KV heads, nor is it a multiple" in check.message


def test_qwen3_table_parameter_counts_match_the_model_cards():
    billions = {k: round(v.params / 1e9, 1) for k, v in QWEN3_TABLE.items()}
    assert billions == {"0.6b": 0.6, "1.7b": 1.7, "4b": 4.0, "8b": 8.2, "14b": 14.8, "32b": 32.8}
    assert model_facts("Qwen/Qwen3-8B") is QWEN3_TABLE["8b"]
    assert model_facts("/models/qwen3-32b-instruct") is QWEN3_TABLE["32b"]
    # the MoE is its own table entry (tests/engines/verl/test_moe_preflight.py), never read as a dense 30B
    assert model_facts("Qwen/Qwen3-30B-A3B").is_moe and model_facts("Qwen/Qwen3-30B") is None


def test_rollout_kv_cache_per_token():
    preset = presets.load_preset(REF)
    mem = estimate_memory(preset, QWEN3_TABLE["32b"], 64 * GiB)
    # KV cache: 2 (K,V) x 64 layers x 8/4 KV heads per rank x 128 x 2 B per token
    assert mem["kv_bytes_per_token"] == 2 * 64 * 2 * 128 * 2
    assert mem["peak_phase"] == "rollout" and set(mem["phases"]) == {"rollout", "update_weights", "old_log_prob", "update"}


def test_host_memory_over_the_nodes_ram_is_refused():
    host = fired(report(["cluster.host_memory_gib=256"]), "host memory")
    assert host.status == "error" and "305.1 GiB" in host.message and "of 256 GiB per node" in host.message
    assert "tensor_parallel_size" in host.fix
    assert fired(report(["cluster.host_memory_gib=1536"]), "host memory").status == "ok"
    # TP 8 halves the sleeping vLLM copies: 16 x 2P/8 + AdamW = 183.1 GiB
    assert "183.1 GiB" in fired(report(["rollout.tensor_parallel_size=8"]), "host memory").message


def test_reference_dry_run_states_phases_and_run_length():
    rep = report([], data=DataFacts(train_rows=17373, val_rows=30, train_rows_in=1791700))
    actor = fired(rep, "actor memory")
    assert actor.status == "ok" and actor.message.startswith("largest phase rollout: ~44.8 GiB per device of 64.0 GiB")
    assert "update 16.3 GiB" in actor.message and "old_log_prob 8.9 GiB" in actor.message
    assert "update_weights 22.2 GiB" in actor.message
    host = fired(rep, "host memory")  # the preset does not state the nodes' RAM: reported, not judged
    assert host.status == "info" and "host per node: old_log_prob 305.1 GiB" in host.message
    length = fired(rep, "run length")
    assert "670 steps x 256 prompts x n 16" in length.message and "sampled ~158 times" in length.message  # drop_last: 670 x 256 of 17,373
    assert "6,998 steps per epoch, 69,980 steps" in length.message
    warn = fired(rep, "dedup vs raw file")
    assert warn.status == "warn" and "divides the steps per epoch by 104" in warn.message
    # no raw count (or no dedup effect): no warning
    assert not [c for c in report([]).checks if c.name == "dedup vs raw file"]


def test_a_run_shorter_than_its_frequencies_is_accepted_and_told_what_happens():
    """verl saves and validates on the last step whatever the frequency (engines/schedule.py): a 4-step cut of
    tiny-verl (save_freq 4, test_freq 8) is no error and the dry run names step 4."""
    rep = report(["trainer.total_training_steps=4"], name="tiny-verl", data=DataFacts(train_rows=2000, val_rows=64))
    assert rep.ok, [(c.name, c.message) for c in rep.errors]
    when = fired(rep, "checkpoints and validation")
    assert when.status == "info" and when.message.startswith("saves and validates at step 4 only (the last step)")
    full = fired(report([], name="tiny-verl", data=DataFacts(train_rows=2000, val_rows=64)), "checkpoints and validation")
    assert full.message.startswith("saves every 4 steps (steps 4, 8, 12, ..., 24); validates every 8 steps")


def test_a_cpu_preset_gets_no_device_memory_warning():
    """Issue 44: every tiny-verl `train` warned that profile 'cpu' is not a known device-memory profile. verl on a
    CPU has no device memory but host RAM: an info row, no warning; an accelerator preset still gets the warning."""
    preset = presets.load_preset("tiny-verl", [])
    rep = preflight.evaluate(preset, facts_for(preset.model.path), DataFacts(train_rows=2000, val_rows=64))
    row = fired(rep, "device memory")
    assert row.status == "info" and "host RAM" in row.message
    assert not [w for w in rep.warnings if w.name == "device memory"]
    control = fired(report(["cluster.profile=mystery"]), "device memory")  # an NPU preset without a known profile
    assert control.status == "warn"

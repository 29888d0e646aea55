"""The per-phase memory model against hand computations for the reference, 8B and H100 presets.

Every figure below is written out from the model card and the preset, not from the module under test:
Qwen3-32B has P = 32,762,123,264 parameters (64 layers x 487,598,336 + 2 x 151,936 x 5,120 embeddings +
5,120 final norm), Qwen3-8B P = 8,190,735,360. One FSDP unit (a decoder layer, the final norm spread over the
layers) is (P - embeddings) / layers: 487,598,416 (32B), 192,946,545 (8B).
"""

from __future__ import annotations

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl import memory
from gspo_cli.engines.verl.model_facts import QWEN3_TABLE

GiB, MiB = 1024**3, 1024**2
V = 151_936  # Qwen3 vocabulary


def phases(name, sets=()):
    preset = presets.load_preset(name, list(sets))
    profile = {"a3": 64 * GiB, "a2-910b": 64 * GiB, "h100": 80 * GiB}[preset.cluster.profile]
    model = QWEN3_TABLE["32b" if "32b" in name else "8b"]
    return memory.estimate(preset, model, profile)


def test_qwen3_32b_4x16_by_hand():
    est = phases("qwen3-32b-4x16")
    P, world, T = 32_762_123_264, 4 * 16, 2560  # T = ppo_max_token_len_per_device = (2048 + 8192) / SP 4
    assert est.params == P
    update = {
        # param_offload + optimizer_offload, yet verl's train context loads all three for the update
        "params_fp32": int(4 * P / world),  # 2,047,632,704
        "grads_fp32": int(4 * P / world),  # 2,047,632,704
        "optimizer_adamw": int(8 * P / world),  # 4,095,265,408: with the two above 16 B x P / 64 = 7.6 GiB
        "gathered_layers_bf16": 2 * 487_598_416 * 2,  # bf16 unit, two in flight (forward_prefetch)
        "gathered_grads_bf16": 2 * 487_598_416 * 2,
        "layer_activations": T * (2 * 5120 + 2 * 8 * 128 + 3 * 25600) * 2,  # 456,130,560
        "logits_bf16": T * V * 2,  # 777,912,320: the micro-batch's full-vocab logits
        "logits_grad_bf16": T * V * 2,
        "entropy_fp32": 3 * 2048 * V * 4,  # 3,733,979,136: chunk of 2048 rows in fp32, softmax, product
        "checkpointed_activations": T * 5120 * 2 * 64,  # 1,677,721,600: one bf16 hidden per token per layer
    }
    assert est.phases["update"].parts == update
    assert est.phases["update"].total == 19_514_974_080  # 18.2 GiB
    old = est.phases["old_log_prob"].parts
    assert old["params_fp32"] == int(4 * P / world) and old["optimizer_adamw"] == 0 and "grads_fp32" not in old
    assert est.phases["old_log_prob"].total == 2_047_632_704 + 1_950_393_664 + 456_130_560 + 777_912_320 + 3_733_979_136
    # rollout: vLLM's 0.7 x 64 GiB + the 4096 MB weight-sync bucket; the actor state is on the host
    assert est.phases["rollout"].parts == {"vllm_budget": int(0.7 * 64 * GiB), "weight_sync_bucket": 4096 * MiB,
                                           "params_fp32": 0, "optimizer_adamw": 0}
    assert est.phases["rollout"].total == 52_398_601_011  # 48.8 GiB
    assert est.peak.name == "rollout"
    # host memory per node for offload: params + grads + AdamW of 16 ranks
    assert est.host_offload_bytes_per_node == 16 * (2 * 2_047_632_704 + 4_095_265_408)


def test_qwen3_8b_1x16_without_offload_by_hand():
    est = phases("qwen3-8b-1x16")
    P, world, T = 8_190_735_360, 16, 5120  # T = (2048 + 8192) / SP 2
    assert est.phases["update"].total == (
        int(4 * P / world) * 2 + int(8 * P / world)  # 8,190,735,360 = 16 B x P / 16
        + 2 * 192_946_545 * 2 * 2  # gathered unit + its gradient, two in flight
        + T * (2 * 4096 + 2 * 8 * 128 + 3 * 12288) * 2  # 482,344,960
        + 2 * T * V * 2  # logits + gradient, 3,111,649,280
        + 3 * 2048 * V * 4
        + T * 4096 * 2 * 36  # 1,509,949,440
    ) == 18_572_230_536
    # no offload: fp32 params and AdamW stay on the device while vLLM generates
    rollout = est.phases["rollout"].parts
    assert rollout["params_fp32"] == int(4 * P / world) and rollout["optimizer_adamw"] == int(8 * P / world)
    assert est.phases["rollout"].total == int(0.7 * 64 * GiB) + 4096 * MiB + 2_047_683_840 + 4_095_367_680
    assert est.phases["rollout"].total == 58_541_652_531  # 54.5 GiB of 64: ok under 0.9
    assert est.host_offload_bytes_per_node == 0


def test_qwen3_32b_h100_by_hand():
    est = phases("qwen3-32b-4x8-h100")
    P, world = 32_762_123_264, 4 * 8
    assert est.phases["update"].parts["optimizer_adamw"] == int(8 * P / world) == 8_190_530_816
    assert est.phases["update"].total == 27_705_504_896  # 25.8 GiB: twice the state of the 64-rank run
    assert est.phases["rollout"].total == int(0.7 * 80 * GiB) + 4096 * MiB == 64_424_509_440  # 60.0 GiB of 80
    assert est.peak.name == "rollout"


def test_offload_moves_state_between_phases_not_out_of_the_update():
    on = phases("qwen3-32b-4x16")
    off = phases("qwen3-32b-4x16", ["actor.param_offload=false", "actor.optimizer_offload=false"])
    P = QWEN3_TABLE["32b"].params
    assert on.phases["update"].total == off.phases["update"].total
    assert off.phases["rollout"].total - on.phases["rollout"].total == pytest.approx(12 * P / 64, abs=2)
    assert off.phases["old_log_prob"].total - on.phases["old_log_prob"].total == int(8 * P / 64)
    assert on.host_offload_bytes_per_node > 0 and off.host_offload_bytes_per_node == 0


def test_dynamic_bsz_off_uses_micro_batches_of_full_sequences():
    preset = presets.load_preset("qwen3-32b-4x16", ["actor.use_dynamic_bsz=false",
                                                    "actor.ppo_micro_batch_size_per_device=2"])
    assert memory.micro_tokens(preset, "update") == 2 * (10240 // 4)
    preset = presets.load_preset("qwen3-32b-4x16", ["rollout.log_prob_max_token_len_per_device=5120"])
    assert memory.micro_tokens(preset, "old_log_prob") == 5120 and memory.micro_tokens(preset, "update") == 2560

"""The per-phase memory model against hand computations for the reference, 8B and H100 presets.

Every figure below is written out from the model card, the preset and the verl 0.9.1 line that puts the term on
the device or the host (cited beside it), not from the module under test. Qwen3-32B has P = 32,762,123,264
parameters (64 layers x 487,598,336 + 2 x 151,936 x 5,120 untied embeddings + 5,120 final norm), Qwen3-8B
P = 8,190,735,360. FSDP2 units: a decoder layer is (P - embeddings) / layers = 487,598,416 (32B), 192,946,545 (8B);
untied `embed_tokens` and `lm_head` are units of their own (fsdp_utils.py:558-569) of V x hidden =
777,912,320 (32B) and 622,329,856 (8B) parameters: the largest unit in both.
"""

from __future__ import annotations

import pytest

from gspo_cli.config import presets
from gspo_cli.sizing import memory
from gspo_cli.sizing.model_facts import QWEN3_TABLE

GiB, MiB = 1024**3, 1024**2
V = 151_936  # Qwen3 vocabulary


def phases(name, sets=()):
    preset = presets.load_preset(name, list(sets))
    profile = {"a3": 64 * GiB, "a2-910b": 64 * GiB, "h100": 80 * GiB}[preset.cluster.profile]
    model = QWEN3_TABLE["32b" if "32b" in name else "8b"]
    return memory.estimate(preset, model, profile)


def test_qwen3_32b_4x16_update_by_hand():
    est = phases("qwen3-32b-4x16")
    P, world, T = 32_762_123_264, 4 * 16, 2560  # T = ppo_max_token_len_per_device = (2048 + 8192) / SP 4
    assert est.params == P
    update = {
        # the train context loads all three for the update, offload or not (workers/engine/base.py:323-327)
        "params_fp32": int(4 * P / world),  # 2,047,632,704
        "grads_fp32": int(4 * P / world),  # 2,047,632,704
        "optimizer_adamw": int(8 * P / world),  # 4,095,265,408
        "gathered_unit_bf16": 2 * 777_912_320,  # lm_head, the largest FSDP2 unit, gathered in bf16
        "prefetched_layer_bf16": 2 * 487_598_416,  # forward_prefetch: the next decoder layer (fsdp_utils.py:605-613)
        "unit_grad_fp32_reduce": 4 * 777_912_320,  # lm_head's gradient, reduced in fp32 (transformer_impl.py:394)
        "layer_activations": T * (2 * 5120 + 2 * 8 * 128 + 3 * 25600) * 2,  # 456,130,560
        "logits_bf16": T * V * 2,  # 777,912,320: the micro-batch's full-vocab logits
        "logits_grad_bf16": T * V * 2,
        "checkpointed_activations": T * 5120 * 2 * 64,  # 1,677,721,600: one bf16 hidden per token per layer
        # no entropy_fp32: entropy_coeff 0, so verl does not compute it in the update (ray_trainer.py:1336)
    }
    assert est.phases["update"].parts == update
    assert est.phases["update"].total == sum(update.values()) == 17_522_878_368  # 16.3 GiB
    # The lm_head backward alone: bf16 weight + fp32 gradient = 4.3 GiB, where a decoder layer is 0.9 GiB
    lm_head = update["gathered_unit_bf16"] + update["unit_grad_fp32_reduce"]
    assert 4.3 * GiB < lm_head < 4.4 * GiB


def test_qwen3_32b_4x16_other_phases_by_hand():
    est = phases("qwen3-32b-4x16")
    P, world, T = 32_762_123_264, 64, 2560
    old = est.phases["old_log_prob"].parts
    # eval context: params only (base.py:321); entropy always (ray_trainer.py:1300): 3 fp32 chunks of 2048 rows
    assert old == {"params_fp32": int(4 * P / world), "optimizer_adamw": 0, "gathered_unit_bf16": 2 * 777_912_320,
                   "prefetched_layer_bf16": 2 * 487_598_416, "layer_activations": 456_130_560,
                   "logits_bf16": T * V * 2, "entropy_fp32": 3 * 2048 * V * 4}
    # rollout: vLLM's 0.7 x 64 GiB only; the actor state is on the host and the sync bucket is gone
    assert est.phases["rollout"].parts == {"vllm_budget": int(0.7 * 64 * GiB), "params_fp32": 0, "optimizer_adamw": 0}
    # update_weights (engine_workers.py:768-823): vLLM weights resumed (TP 4), the 4096 MB bucket
    # (bucketed_weight_transfer.py:183), one full fp32 tensor from FSDP2 (lm_head, transformer_impl.py:1030)
    sync = est.phases["update_weights"]
    assert sync.parts == {"vllm_weights": 2 * P // 4, "weight_sync_bucket": 4096 * MiB,
                          "full_tensor_fp32": 4 * 777_912_320, "params_fp32": 0, "optimizer_adamw": 0}
    assert sync.total == 16_381_061_632 + 4_294_967_296 + 3_111_649_280  # 22.2 GiB
    assert est.peak.name == "rollout" and est.peak.total == 48_103_633_715  # 44.8 GiB of 64


def test_qwen3_32b_4x16_host_memory_by_hand():
    est = phases("qwen3-32b-4x16")
    P, ranks = 32_762_123_264, 16
    params, adamw, vllm_tp4 = 2_047_632_704, 4_095_265_408, 2 * P // 4  # 16,381,061,632 per rank at TP 4
    assert est.sleep_level == 1  # Ascend: vLLM sleeps at level 1 and keeps its weights in host RAM
    host = {n: p.host_parts for n, p in est.phases.items()}
    # between phases: fp32 params and AdamW offloaded; no gradients (zero_grad frees them, transformer_impl.py:1138)
    assert host["rollout"] == {"params_fp32": ranks * params, "optimizer_adamw": ranks * adamw}
    assert host["update_weights"] == host["rollout"]
    # vLLM asleep: 16 ranks x 2P/4 = 262,096,986,112 B = 244.1 GiB per node, plus AdamW still on the host
    assert host["old_log_prob"] == {"optimizer_adamw": ranks * adamw, "vllm_weights_asleep_level1": ranks * vllm_tp4}
    assert host["update"] == {"vllm_weights_asleep_level1": 262_096_986_112}
    assert est.host_peak.name == "old_log_prob"
    assert est.host_offload_bytes_per_node == 16 * (4_095_265_408 + 16_381_061_632) == 327_621_232_640  # 305.1 GiB


def test_cuda_vllm_sleeps_at_level_2_and_keeps_no_weights_on_the_host():
    est = phases("qwen3-32b-4x8-h100")
    P, world = 32_762_123_264, 32
    assert est.sleep_level == 2
    assert all("vllm_weights_asleep_level1" not in p.host_parts for p in est.phases.values())
    assert est.phases["update"].parts["optimizer_adamw"] == int(8 * P / world) == 8_190_530_816
    assert est.phases["rollout"].total == int(0.7 * 80 * GiB) == 60_129_542_144
    assert est.host_offload_bytes_per_node == 8 * (int(4 * P / world) + int(8 * P / world))


def test_qwen3_8b_1x16_without_offload_by_hand():
    est = phases("qwen3-8b-1x16")
    P, world, T = 8_190_735_360, 16, 5120  # T = (2048 + 8192) / SP 2
    assert est.phases["update"].total == (
        int(4 * P / world) * 2 + int(8 * P / world)  # 8,190,735,360 = 16 B x P / 16
        + 2 * 622_329_856 + 2 * 192_946_545  # lm_head unit + the prefetched decoder layer, bf16
        + 4 * 622_329_856  # lm_head's fp32 gradient for the reduce
        + T * (2 * 4096 + 2 * 8 * 128 + 3 * 12288) * 2  # 482,344,960
        + 2 * T * V * 2  # logits + gradient, 3,111,649,280
        + T * 4096 * 2 * 36  # 1,509,949,440
    ) == 17_414_551_266
    # no offload: fp32 params and AdamW stay on the device while vLLM generates
    rollout = est.phases["rollout"].parts
    assert rollout == {"vllm_budget": int(0.7 * 64 * GiB), "params_fp32": int(4 * P / world),
                       "optimizer_adamw": int(8 * P / world)}
    assert est.phases["rollout"].total == 48_103_633_715 + 2_047_683_840 + 4_095_367_680 == 54_246_685_235
    # nothing offloaded, but vLLM's level-1 sleep still keeps 16 x 2P/2 of weights in host RAM
    assert est.host_offload_bytes_per_node == 16 * (2 * P // 2) == 131_051_765_760


def test_offload_moves_state_between_phases_not_out_of_the_update():
    on = phases("qwen3-32b-4x16")
    off = phases("qwen3-32b-4x16", ["actor.param_offload=false", "actor.optimizer_offload=false"])
    P = QWEN3_TABLE["32b"].params
    assert on.phases["update"].total == off.phases["update"].total
    assert off.phases["rollout"].total - on.phases["rollout"].total == pytest.approx(12 * P / 64, abs=2)
    assert off.phases["old_log_prob"].total - on.phases["old_log_prob"].total == int(8 * P / 64)
    assert on.phases["rollout"].host_total > 0 and off.phases["rollout"].host_total == 0
@pytest.mark.slow


def test_entropy_is_counted_in_the_update_only_with_an_entropy_bonus():
    without = phases("qwen3-32b-4x16").phases["update"].parts
    with_bonus = phases("qwen3-32b-4x16", ["algorithm.entropy_coeff=0.001"]).phases["update"].parts
    assert "entropy_fp32" not in without and with_bonus["entropy_fp32"] == 3 * 2048 * V * 4


def test_dynamic_bsz_off_uses_micro_batches_of_full_sequences():
    preset = presets.load_preset("qwen3-32b-4x16", ["actor.use_dynamic_bsz=false",
                                                    "actor.ppo_micro_batch_size_per_device=2"])
    assert memory.micro_tokens(preset, "update") == 2 * (10240 // 4)
    preset = presets.load_preset("qwen3-32b-4x16", ["rollout.log_prob_max_token_len_per_device=5120"])
    assert memory.micro_tokens(preset, "old_log_prob") == 5120 and memory.micro_tokens(preset, "update") == 2560

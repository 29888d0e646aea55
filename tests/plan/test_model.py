"""The step-time model's arithmetic: each mechanism it claims moves the prediction the way (and by the amount) it
says, on workloads where that mechanism is the only thing that differs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gspo_cli.plan import model
from gspo_cli.plan.calibration import QWEN3_06B, QWEN3_32B
from gspo_cli.plan.workload import Lengths, Workload
from gspo_cli.sizing.profiles import BUILTIN

A3 = BUILTIN["a3"]


def verl_32b(**kw) -> Workload:
    base = dict(model=QWEN3_32B, nodes=4, devices_per_node=16, engine="verl", rollout="vllm", prompts=256, n=16,
                max_prompt=2048, max_response=8192, tp=4, sp=4, gpu_memory_utilization=0.7, micro_tokens=2560,
                param_offload=True, optimizer_offload=True, mini_batches=4)
    return Workload(**(base | kw))


def test_throughput_is_step_tokens_over_devices_and_seconds():
    w = verl_32b()
    pred = model.predict(w, A3)
    tokens = w.trajectories * (w.prompt_mean + w.response_mean)
    assert pred.step_tokens == pytest.approx(tokens)
    assert pred.tokens_per_device_per_s == pytest.approx(tokens / 64 / sum(pred.phases.values()))
    assert pred.bottleneck.startswith(max(pred.phases, key=pred.phases.get))


def test_memory_bound_decode_scales_with_hbm_bandwidth():
    w = verl_32b(prompts=8, n=1, lengths=Lengths(0.1, 0.5, 0.0))  # 8 sequences: far from compute-bound
    slow = A3.with_factors(vllm_layer_overhead_s=0.0)
    fast = replace(slow, hbm_bytes_s=2 * slow.hbm_bytes_s)
    t_slow, bound = model.decode_step_s(w, slow, 8, 1000)
    t_fast, _ = model.decode_step_s(w, fast, 8, 1000)
    assert bound == "memory-bandwidth"
    tp_comm = t_slow - (w.weight_bytes * w.model.params / w.tp + 8 * 1000 * model.kv_bytes_per_token(w)) / (
        slow.hbm_bytes_s * slow.decode_bw_eff)
    assert (t_fast - tp_comm) == pytest.approx((t_slow - tp_comm) / 2)


def test_graph_capture_cuts_launch_overhead():
    eager = model.predict(verl_32b(enforce_eager=True), A3).phases["gen"]
    graphs = model.predict(verl_32b(enforce_eager=False), A3).phases["gen"]
    assert graphs < eager


def test_the_step_waits_for_the_longest_response():
    short_tail = model.predict(verl_32b(lengths=Lengths(0.15, 0.3, 0.0)), A3)
    long_tail = model.predict(verl_32b(lengths=Lengths(0.15, 0.3, 0.01)), A3)
    assert long_tail.details["gen_tail_s"] > short_tail.details["gen_tail_s"]
    assert long_tail.phases["gen"] > short_tail.phases["gen"]


def test_gradient_checkpointing_costs_a_third_more_update_compute():
    prof = BUILTIN["h200"].with_factors(train_layer_overhead_s=0.0)
    w = Workload(QWEN3_06B, 1, 1, "native", "hf", 64, 8, 512, 4096, grad_ckpt=False, old_log_prob=False)
    plain = model.update_actor_s(w, prof)
    ckpt = model.update_actor_s(replace(w, grad_ckpt=True), prof)
    adamw = 16 * 3 * w.model.params / prof.hbm_bytes_s
    assert (ckpt - adamw) / (plain - adamw) == pytest.approx(4 / 3)


def test_offload_adds_host_transfers_of_params_grads_and_optimizer_states():
    on, off = verl_32b(), verl_32b(param_offload=False, optimizer_offload=False)
    shard = QWEN3_32B.params / 64
    extra = model.update_actor_s(on, A3) - model.update_actor_s(off, A3)
    assert extra == pytest.approx((2 * 4 + 4 + 2 * 8) * shard / A3.host_bytes_s)


def test_larger_micro_batches_mean_fewer_fsdp_gathers():
    small = model.forward_pass_s(verl_32b(micro_tokens=2560, nodes=1, devices_per_node=16), A3, train=True)
    big = model.forward_pass_s(verl_32b(micro_tokens=40960, nodes=1, devices_per_node=16), A3, train=True)
    assert big < small


def test_native_engine_has_no_weight_sync_and_skips_old_log_prob_on_a_single_pass():
    w = Workload(QWEN3_06B, 1, 1, "native", "hf", 16, 8, 512, 512, old_log_prob=False)
    pred = model.predict(w, BUILTIN["h200"])
    assert pred.phases["update_weights"] == 0 and pred.phases["old_log_prob"] == 0
    assert pred.phases["gen"] > 0 and pred.phases["update_actor"] > 0

"""Issue #34: the FSDP update's costs that do not shrink with more devices, and the held-out fully_async speedups
of verl's published H20 runs (never fitted) as a regression bound, with a control showing the bound bites on the
old model's two omissions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gspo_cli.plan import calibration, model
from gspo_cli.plan.calibration import QWEN25_MATH_7B
from gspo_cli.plan.workload import Lengths, Workload
from gspo_cli.sizing.profiles import BUILTIN

H20 = BUILTIN["h20"]
# What the shipped model predicts for the held-out async points (published: 2.68x / 1.93x / 2.37x), as a bound a
# change must not loosen: within 30% at 64 and 128 cards, 57% at 32 (the sync 32-card run it is compared with trains
# slower per card than the async runs: docs/plan.md, "Async modes").
BOUNDS = {"fa-32/async": 0.58, "fa-64/async": 0.31, "fa-128/async": 0.31}
BEFORE = {"fa-32/async": 0.853, "fa-64/async": 0.9842, "fa-128/async": 1.241}  # main at ff689e0 (docs/plan.md)


def work(**kw) -> Workload:
    base = Workload(QWEN25_MATH_7B, 4, 8, "verl", "vllm", 512, 16, 2048, 28672,
                    Lengths(0.05, 0.07, 0.005, "test lengths"), tp=4, sp=4, micro_tokens=61440, mini_batches=16)
    return replace(base, **kw)


def async_rows(profile=None, baseline=True) -> dict[str, tuple[float, float]]:
    """(predicted, measured) speedup of each held-out fully_async point."""
    profiles = dict(BUILTIN) | ({"h20": profile} if profile else {})
    out = {}
    for p in calibration.points():
        if p.quantity == "speedup_vs_sync":
            assert p.role == "held-out"  # never fitted
            point = p if baseline else replace(p, baseline=None)
            out[p.id] = (calibration.predicted(point, profiles[p.profile]), p.measured)
    return out


def test_held_out_async_speedups_stay_within_their_bounds():
    rows = async_rows()
    assert set(rows) == set(BOUNDS)
    for ident, (pred, measured) in rows.items():
        assert abs(pred / measured - 1) < BOUNDS[ident], (ident, pred, measured)
        assert abs(pred / measured - 1) < abs(BEFORE[ident] / measured - 1)  # closer than before
        assert pred > 1.0  # the model now says async pays on these runs, as they measured


def test_control_the_old_models_omissions_put_every_point_outside_the_bound():
    """Without the per-phase cost that no device count shrinks and against a sync run that does not recompute old
    log-probs (the old comparison), every held-out speedup misses by more than 30% again."""
    old = async_rows(H20.with_factors(batch_move_s_per_token=0.0), baseline=False)
    for ident, (pred, measured) in old.items():
        assert abs(pred / measured - 1) > 0.3, (ident, pred, measured)


def test_the_held_out_figures_are_the_published_ones():
    """verl docs/advance/fully_async.md, H20 table: colocate sync step / fully_async step."""
    rows = async_rows()
    assert rows["fa-32/async"][1] == pytest.approx(790.10 / 294.77)
    assert rows["fa-64/async"][1] == pytest.approx(365.28 / 189.26)
    assert rows["fa-128/async"][1] == pytest.approx(356.30 / 150.63)
    sync32 = {p.quantity: p.measured for p in calibration.points() if p.id.startswith("fa-32/") and p.role == "fit"}
    assert sync32 == {"old_log_prob": 107.71, "update_actor": 313.81}  # the sync row's, not the async row's 269.80


def test_a_training_phase_has_a_cost_no_device_count_shrinks():
    small, large = work(nodes=2), work(nodes=16)
    fixed = model.batch_move_s(small, H20)
    assert fixed == pytest.approx(512 * 16 * (2048 + 28672) * H20.batch_move_s_per_token) == model.batch_move_s(
        large, H20)
    # compute halves with twice the devices; the fixed part does not
    a, b = model.update_actor_s(work(nodes=4), H20), model.update_actor_s(work(nodes=8), H20)
    assert a / b < 2 * 0.95
    assert model.batch_move_s(work(engine="native", rollout="hf"), H20) == 0  # one process: nothing dispatched


def test_hsdp_keeps_the_shard_and_adds_a_replica_all_reduce():
    fsdp, hsdp = work(), work(fsdp_size=2, param_offload=True, optimizer_offload=True)
    assert fsdp.shard_ranks == 32 and hsdp.shard_ranks == 2
    # offload moves params / fsdp_size per rank at any device count
    assert model.offload_s(hsdp, H20, train=True) == model.offload_s(replace(hsdp, nodes=16), H20, train=True)
    shard = QWEN25_MATH_7B.params / 2
    assert model.offload_s(hsdp, H20, train=True) == pytest.approx((8 + 4 + 16) * shard / H20.host_bytes_s)
    # the ring all-reduce of the fp32 shard over 16 replicas across nodes: 2 (R-1)/R of it per rank, per optimizer step
    expected = 2 * 4 * shard * 15 / 16 / (H20.inter_node_bytes_s * H20.comm_eff)
    assert model.replica_allreduce_s(hsdp, H20, 4 * shard) == pytest.approx(expected)
    assert model.replica_allreduce_s(fsdp, H20, 4 * shard) == 0


def test_slowest_group_only_waits_for_a_sequence_longer_than_its_share():
    # 512 x 16 responses of ~2K over 8 SP groups: each group's share of a mini-batch is far above 28K
    assert model.slowest_group_factor(work(), train=True) == 1.0
    # one prompt x 16 over 128 groups of one device: a group holds ~0.1 sequence, the longest sets the pace
    tiny = work(prompts=1, nodes=16, sp=1, mini_batches=1)
    seq = tiny.prompt_mean + tiny.response_mean
    longest = tiny.prompt_mean + tiny.max_response
    assert model.slowest_group_factor(tiny, train=True) == pytest.approx(longest / (16 * seq / 128))
    assert model.slowest_group_factor(work(nodes=1, devices_per_node=1, sp=1), train=True) == 1.0


def test_the_async_comparison_uses_the_published_sync_runs_setup():
    for p in calibration.points():
        if p.quantity == "speedup_vs_sync":
            assert p.baseline is not None and p.baseline.old_log_prob and p.baseline.param_offload
            assert not p.workload.old_log_prob and not p.workload.param_offload  # rollout log-probs, no offload
            assert p.workload.fsdp_size == p.baseline.fsdp_size == 2


def test_plan_names_the_best_layout_or_mode_with_its_risk(gspo):
    proc = gspo("plan", "--preset", "qwen3-32b-4x16")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "Best (" in text and "x the preset's" in text and "risk" in text

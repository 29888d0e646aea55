"""A3 counts dies, A2 counts cards: doctor's device count, preflight's world size and the planner's per-device
memory, all against the real `npu-smi info` captures (tests/env/fixtures, copies of /work/shared/fixtures/ascend)."""

from __future__ import annotations

from env_hosts import A2_INFO, A3_INFO

from gspo_cli.config.presets import load_preset
from gspo_cli.env.checks import npu_fit_checks
from gspo_cli.env.npusmi import parse_info
from gspo_cli.sizing import profiles
from gspo_cli.sizing.model_facts import MiB


def _devices(text):
    devs = parse_info(text)["devices"]
    return devs, len({d["npu"] for d in devs})


def test_a3_capture_is_16_dies_on_8_cards_and_the_a3_presets_count_dies():
    devs, cards = _devices(A3_INFO)
    assert (len(devs), cards) == (16, 8) and {d["hbm_total_mb"] for d in devs} == {65536}
    preset = load_preset("qwen3-32b-4x16")
    assert preset.cluster.devices_per_node == len(devs) and preset.cluster.world_size == 64
    # one die's HBM is what preflight and the planner give one device (one registry entry: both ask it)
    assert profiles.memory_profile("a3") is profiles.get("a3")
    assert profiles.get("a3").memory_bytes == 65536 * MiB
    assert [c.status for c in npu_fit_checks(devs, "a3", preset)] == ["ok", "ok"]


def test_a2_capture_is_8_cards_and_a_card_is_a_device():
    devs, cards = _devices(A2_INFO)
    assert len(devs) == cards == 8 and {d["hbm_total_mb"] for d in devs} == {65536}
    # preflight knows A2 by its preset name a2-910b, the planner by a2 (and its alias a2-910b): one entry
    assert profiles.memory_profile("a2-910b") is profiles.get("a2") is profiles.get("a2-910b")
    assert profiles.get("a2").memory_bytes == 65536 * MiB
    preset = load_preset("qwen3-8b-2x8")
    count = npu_fit_checks(devs, "a2", preset)[0]
    assert count.status == "ok" and "8 devices here" in count.message and "dies" not in count.message


def test_an_a3_preset_that_counts_cards_is_told_to_count_dies():
    devs, _ = _devices(A3_INFO)
    preset = load_preset("qwen3-32b-4x16", ["cluster.devices_per_node=8", "rollout.tensor_parallel_size=8"])
    count = npu_fit_checks(devs, "a3", preset)[0]
    assert count.status == "error" and "[a3-dies-vs-cards]" in count.message

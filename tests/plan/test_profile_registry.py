"""One registry entry per hardware profile (gspo_cli/sizing/profiles.py): the planner and preflight's memory checks
ask the same entry for a device's memory, under the names users see (`gspo plan --profile a2`, preflight's
`cluster.profile: a2-910b` and its label "Atlas A2 910B")."""

from __future__ import annotations

import dataclasses

from gspo_cli.config.presets import load_preset
from gspo_cli.engines.verl.preflight import evaluate
from gspo_cli.plan import memory
from gspo_cli.sizing import profiles


def _check(preset, name):
    return next(c for c in evaluate(preset, memory.facts(preset), None).checks if c.name == name)


def test_the_planner_names_a2_as_preflight_knows_it_and_both_read_one_memory_figure(monkeypatch):
    a2 = memory.with_profile(load_preset("qwen3-8b-2x8"), "a2")
    assert a2.cluster.profile == "a2-910b"  # preflight's name for A2, unchanged
    assert "of 64.0 GiB (Atlas A2 910B)" in _check(a2, "actor memory").message
    assert profiles.get(a2.cluster.profile) is profiles.get("a2") is profiles.memory_profile("a2-910b")
    # the figure lives once: change the entry and both the planner and preflight see it
    monkeypatch.setitem(profiles.BUILTIN, "a2", dataclasses.replace(profiles.BUILTIN["a2"], memory_gib=32))
    assert profiles.get("a2").memory_bytes == 32 * 1024**3
    assert "of 32.0 GiB (Atlas A2 910B)" in _check(a2, "actor memory").message


def test_a_profile_without_a_memory_label_is_not_memory_checked():
    """The control: h20 and cpu have step-time factors but preflight never checked memory against them."""
    h20 = memory.with_profile(load_preset("qwen3-8b-2x8"), "h20")
    assert h20.cluster.profile == "h20"
    device = _check(h20, "device memory")
    assert device.status == "warn" and "is not one of a3, a2-910b, h100, h200" in device.message
    assert [p.name for p in profiles.memory_checked()] == ["a3", "a2", "h100", "h200"]
    assert profiles.memory_profile("a2") is None  # the planner's alias is not a preflight name (as before)

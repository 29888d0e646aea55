"""Layout search: only layouts preflight accepts, fastest first, and each one's --set lines reproduce it."""

from __future__ import annotations

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.engines.verl import preflight
from gspo_cli.plan import layouts, memory, service
from gspo_cli.sizing import profiles


@pytest.fixture(scope="module")
def result():
    return service.plan(load_preset("qwen3-32b"), preflight=preflight.evaluate, top=6)


def test_layouts_are_accepted_by_preflight_and_ranked(result):
    found = result.search.layouts
    assert found and result.search.evaluated > 100 and result.search.rejected > 0
    # fastest first; a layout with a preflight warning ranks as if WARN_PENALTY slower
    ranked = [lay.prediction.tokens_per_device_per_s * (layouts.WARN_PENALTY if lay.verdict.status == "warn" else 1)
              for lay in found]
    assert ranked == sorted(ranked, reverse=True)
    assert found[0].prediction.tokens_per_device_per_s > result.prediction.tokens_per_device_per_s
    facts = memory.facts(result.preset)
    for lay in found:
        report = preflight.evaluate(layouts.apply(result.preset, lay.changes), facts, None)
        assert not report.errors


def test_set_lines_reproduce_the_layout(result):
    best = result.search.layouts[0]
    again = load_preset("qwen3-32b", best.sets)
    _, pred, _ = service.predict(again, result.profile, preflight=preflight.evaluate)
    assert pred.tokens_per_device_per_s == pytest.approx(best.prediction.tokens_per_device_per_s)


def test_a_layout_preflight_rejects_is_never_listed():
    import dataclasses

    preset = load_preset("qwen3-32b")
    # 6 KV heads: rollout TP 4 / 8 / 16 neither divide them nor are multiples (vLLM splits or replicates KV heads)
    facts = dataclasses.replace(memory.facts(preset), num_key_value_heads=6)
    res = layouts.search(preset, facts, profiles.get("a3"), top=10_000, preflight=preflight.evaluate)
    assert all(lay.changes.get("rollout.tensor_parallel_size", 4) not in (4, 8, 16) for lay in res.layouts)
    assert res.rejected_by.get("TP | KV heads", 0) > 0


def test_write_preset_saves_a_loadable_preset_with_the_best_layout(result, tmp_path):
    path = service.write_preset(result, "qwen3-32b", str(tmp_path / "fast.yaml"))
    saved = load_preset(str(path))
    for key, value in result.search.layouts[0].changes.items():
        section, name = key.split(".", 1)
        assert getattr(getattr(saved, section), name) == value


def test_profile_and_shape_overrides_change_the_plan():
    preset = load_preset("qwen3-8b-2x8")
    a2 = service.plan(preset, preflight=preflight.evaluate, search=False)
    h100 = service.plan(preset, preflight=preflight.evaluate, profile="h100", search=False)
    bigger = service.plan(preset, preflight=preflight.evaluate, nodes=4, search=False)
    assert a2.profile.name == "a2" and h100.profile.name == "h100"
    assert h100.prediction.step_s < a2.prediction.step_s
    assert bigger.workload.devices == 32


"""Issue #44 item 4: `gspo plan --preset qwen3-32b` recommended `trainer.mode=colocate_async` (1.09x) although its
preflight warns, ranked layouts within 1 % as if different, gave no whole-run time and no next command. Now: Best
is the fastest layout without a warning (the faster warned mode is shown, not recommended), ties within the stated
1 % are listed as ties, the whole run is steps x the best's step, and the next command trains it; --json the same."""

from __future__ import annotations

import json

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.engines.verl.preflight import evaluate
from gspo_cli.plan import recommend, service
from gspo_cli.shell import command

pytestmark = pytest.mark.slow  # CLI subprocesses of the layout search


def test_plan_recommends_no_warned_layout_states_ties_the_run_time_and_the_next_command(gspo, gspo_home):
    args = ("plan", "--preset", "qwen3-32b", "--set", "trainer.total_training_steps=100")
    data = json.loads(gspo(*args, "--json").stdout)
    rec, found = data["recommendation"], data["layouts"] + data["modes"]
    assert rec["preset_warnings"] == []  # the preset as given (sync) raises none
    warned = [lay for lay in found if lay["warnings"]]
    fastest = max(found, key=lambda lay: lay["tokens_per_device_per_s"])
    assert fastest["mode"] == "colocate_async" and fastest in warned  # what base recommended
    assert data["best"]["mode"] == "sync" and data["best"]["memory_verdict"] == "ok" and not rec["best"]["warnings"]
    assert rec["best"]["tokens_per_device_per_s"] == max(lay["tokens_per_device_per_s"] for lay in found
                                                         if lay not in warned)
    assert [w["mode"] for w in rec["not_recommended_warn"]] == ["colocate_async"]
    best_speed = rec["best"]["tokens_per_device_per_s"]
    assert rec["tie_tolerance"] == recommend.TIE == 0.01 and "display's rounding" in rec["tie_why"]
    assert rec["ties"] and all(t["tokens_per_device_per_s"] >= best_speed * 0.99 for t in rec["ties"])
    outside = [lay for lay in data["layouts"] if lay["tokens_per_device_per_s"] < best_speed * 0.99]
    assert all(o["sets"] not in [t["sets"] for t in rec["ties"]] for o in outside)
    # whole run = steps x the best's predicted step, on the preset's devices
    best_step = next(lay["step_s"] for lay in found if lay["sets"] == rec["best"]["sets"])
    assert rec["run"]["steps"] == 100 and rec["run"]["devices"] == 64 and rec["run"]["resource"] == "NPU"
    assert rec["run"]["total_s"] == pytest.approx(100 * best_step, rel=1e-3)
    want = command("gspo", "train", "--preset", "qwen3-32b", "--set", "trainer.total_training_steps=100",
                   *[a for s in rec["best"]["sets"] for a in ("--set", s)])
    assert rec["next_command"] == want
    text = gspo(*args).stdout
    flat = " ".join(text.split())
    assert "Not recommended (colocate_async)" in flat and "but preflight warns" in flat
    assert "Best (sync)" in flat and "tied with it (within 1 %" in flat
    assert "Whole run: 100 steps x ~" in flat and "on 64 NPU" in flat
    assert f"Next: {want} --dry-run" in flat


def test_without_set_steps_the_run_time_says_why_it_is_unknown(gspo_home):
    result = service.plan(load_preset("qwen3-32b"), preflight=evaluate, ref="qwen3-32b")
    rec = result.recommendation
    assert rec is not None and rec.run is None and "not prepared" in rec.run_unknown
    assert rec.command.startswith("gspo train --preset qwen3-32b --set ")

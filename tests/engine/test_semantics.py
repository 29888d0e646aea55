"""The statistics behind the engine tier's learning and cross-engine thresholds (semantics.py), and the thresholds
themselves re-derived from the recorded runs they came from. Plain arithmetic on a JSONL file, milliseconds; marked
`engine` so they run with the checks they calibrate (tests/engine's conftest skips the folder outside that venv).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import semantics

pytestmark = pytest.mark.engine

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "learning_spread" / "2026-12-06.jsonl"


def _runs() -> list[dict]:
    return [json.loads(x) for x in RUNS.read_text().splitlines() if x.strip()]


def test_learn_threshold_sits_as_many_sds_from_each_mean():
    learning, still = [0.4, 0.6, 0.8], [-0.1, 0.0, 0.1, 0.0]
    t, k = semantics.learn_threshold(learning, still)
    (mu_l, sd_l), (mu_z, sd_z) = semantics.mean_sd(learning), semantics.mean_sd(still)
    assert (mu_l - t) / sd_l == pytest.approx(k) == pytest.approx((t - mu_z) / sd_z)
    assert k == pytest.approx((0.6 - 0.0) / (0.2 + statistics.stdev(still)))


def test_pooled_sd_weights_each_group_by_its_degrees_of_freedom():
    # [1, 3]: variance 2 on 1 df; [0, 0, 6]: variance 12 on 2 df; each about its own mean
    assert semantics.pooled_sd([[1.0, 3.0], [0.0, 0.0, 6.0]]) == pytest.approx((26 / 3) ** 0.5)
    assert semantics.pooled_sd([[1.0, 3.0], [11.0, 13.0]]) == pytest.approx(2 ** 0.5)  # a shift between groups is no spread


def test_band_is_the_reference_mean_plus_minus_the_measured_half_width():
    curves = [[0.0, 0.2], [0.2, 0.4]]
    ref = semantics.band(curves, (0.1, 0.2), (0.2, 0.2))
    assert ref[0] == pytest.approx((0.1, semantics.BAND_Z * (0.01 + 0.04 / 2) ** 0.5))
    assert ref[1] == pytest.approx((0.3, semantics.BAND_Z * (0.04 + 0.04 / 2) ** 0.5))
    inside = [ref[0][0] + 0.99 * ref[0][1], ref[1][0] - 0.99 * ref[1][1]]
    assert not semantics.outside(inside, ref)
    assert semantics.outside([ref[0][0] + 1.01 * ref[0][1], ref[1][0]], ref) == [
        f"block 1: {inside[0] + 0.02 * ref[0][1]:+.3f} outside {ref[0][0]:+.3f} +- {ref[0][1]:.3f}"]


def test_thresholds_are_the_derivation_of_the_recorded_runs():
    """LEARN_MARGIN, BLOCK_SD_RUN and BLOCK_SD_REF are what semantics.derive gives on the committed runs
    (benchmarks/learning_spread.py's records), and the learning check separates the two distributions by at least
    the 3 sd the plan requires. Control: the same derivation without one reference run gives other constants (the
    check reads the runs, it does not restate the constants)."""
    runs = _runs()
    derived = semantics.derive(runs)
    assert derived["learn_margin"] == semantics.LEARN_MARGIN
    assert derived["block_sd_run"] == semantics.BLOCK_SD_RUN
    assert derived["block_sd_ref"] == semantics.BLOCK_SD_REF
    assert derived["k"] >= 3, derived
    fewer = [r for r in runs if r is not next(x for x in runs if x["group"] == "N1")]
    assert semantics.derive(fewer)["block_sd_ref"] != semantics.BLOCK_SD_REF


def test_recorded_runs_follow_the_plan():
    """Every recorded run is 24 steps of its group's design with its figures consistent: the rise and block means
    are those of its per-step rewards (a run taken from an earlier record has its block means and names its source)."""
    runs = _runs()
    # Vu: verl runs without the CPU switch verl_batch_order (recorded, not derived from); V and V0 have it on
    assert {"V", "V0", "N", "N0", "N1"} <= {r["group"] for r in runs} <= {"V", "V0", "Vu", "N", "N0", "N1"}
    for r in runs:
        assert len(r["blocks"]) == 6 and r["rise"] == pytest.approx(r["blocks"][-1] - r["blocks"][0], abs=1e-3)
        if r["scores"] is None:
            assert r["source"].startswith("docs/benchmarks.md"), r
            continue
        assert len(r["scores"]) == 24, r["seed"]
        assert r["blocks"] == pytest.approx([statistics.fmean(r["scores"][i:i + 4]) for i in range(0, 24, 4)])
        assert r["lr0"] == (r["group"] in ("V0", "N0")) and r["data_seed_pinned"] == (r["group"] == "N1")
        assert r["verl_batch_order"] == {"V": True, "V0": True, "Vu": False}.get(r["group"]), r

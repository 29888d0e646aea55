"""Calibration: the points carry sources and roles, the fit recovers known factors, the shipped profiles are the
fitted ones (fit points reproduced), and held-out points are reported, not fitted."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gspo_cli.plan import calibration
from gspo_cli.plan.profiles import BUILTIN


def test_every_point_has_a_source_a_role_and_a_positive_measurement():
    pts = calibration.points()
    assert {p.role for p in pts} == {"fit", "held-out"}
    for p in pts:
        assert p.source and p.measured > 0 and p.profile in BUILTIN
        assert p.workload.lengths.source  # the length assumption is always stated


def test_each_fitted_family_keeps_held_out_points_except_where_only_one_run_exists():
    pts = calibration.points()
    for family, (names, _) in calibration.FIT_PLAN.items():
        held = [p for p in pts if p.role == "held-out" and p.profile in names]
        if family != "gpu":  # one H200 run (issue #17): both its numbers are needed to fit
            assert held, family


def test_fit_recovers_a_known_factor():
    truth = BUILTIN["a3"].with_factors(mfu_train=0.21, decode_bw_eff=0.45)
    pts = [replace(p, measured=calibration.predicted(p, truth)) for p in calibration.points()
           if p.role == "fit" and p.profile == "a3"]
    start = BUILTIN["a3"].with_factors(mfu_train=0.5, decode_bw_eff=0.9)
    fitted = calibration.fit_factors(start, ("decode_bw_eff", "mfu_train"), pts)
    assert fitted["mfu_train"] == pytest.approx(0.21, rel=0.02)
    assert fitted["decode_bw_eff"] == pytest.approx(0.45, rel=0.02)


@pytest.mark.parametrize("profile", ["a3", "h200"])
def test_shipped_factors_reproduce_their_fit_points(profile):
    for row in calibration.table():
        if row["role"] == "fit" and row["profile"] == profile:
            assert abs(math.log(row["predicted"] / row["measured"])) < 0.05, row


def test_table_reports_held_out_error_without_hiding_misses():
    rows = {r["point"]: r for r in calibration.table()}
    a2 = rows["msrl-q25-32b-a2"]
    assert a2["role"] == "held-out"
    assert a2["error_pct"] == pytest.approx(100 * (a2["predicted"] - 35.0) / 35.0)


def test_shipped_factors_are_what_the_fit_gives():
    """benchmarks/plan_fit.py from FIT_START reproduces the factors shipped in profiles.py (no hand tuning)."""
    pts = calibration.points()
    for family, (names, factors) in calibration.FIT_PLAN.items():
        shipped = BUILTIN[names[0]]
        fit_pts = [p for p in pts if p.role == "fit" and p.profile == names[0]]
        fitted = calibration.fit_factors(shipped, factors, fit_pts, start=calibration.FIT_START)
        for k, v in fitted.items():
            assert getattr(shipped, k) == pytest.approx(v, rel=0.02), (family, k)

"""Fit the step-time model's efficiency factors to the calibration points and print the calibration table.

    python benchmarks/plan_fit.py            # fit, then the table with the fitted factors
    python benchmarks/plan_fit.py --shipped  # the table with the factors shipped in gspo_cli/plan/profiles.py

Fit points set the factors of their profile family (FIT_PLAN in gspo_cli/plan/calibration.py); held-out points
are only predicted. Paste the printed factors into profiles.py to ship them.
"""

from __future__ import annotations

import sys

from gspo_cli.plan import calibration
from gspo_cli.plan.profiles import BUILTIN


def fitted_profiles() -> tuple[dict, dict]:
    profiles = dict(BUILTIN)
    fitted = {}
    pts = calibration.points()
    for family, (names, factors) in calibration.FIT_PLAN.items():
        fit_pts = [p for p in pts if p.role == "fit" and p.profile == names[0]]
        values = calibration.fit_factors(profiles[names[0]], factors, fit_pts, start=calibration.FIT_START)
        fitted[family] = values
        for name in names:
            profiles[name] = profiles[name].with_factors(**values)
    return profiles, fitted


def main(argv: list[str]) -> None:
    if "--shipped" in argv:
        profiles, fitted = dict(BUILTIN), {}
    else:
        profiles, fitted = fitted_profiles()
    for family, values in fitted.items():
        print(f"{family}: " + ", ".join(f"{k}={v:.6g}" for k, v in values.items()))
    print("| point | role | what | quantity | predicted | measured | error |")
    print("|---|---|---|---|---:|---:|---:|")
    rows = calibration.table(profiles)
    for r in rows:
        role = "**held-out**" if r["role"] == "held-out" else "fit"
        print(f"| {r['point']} | {role} | {r['what']} | {r['quantity']} | {r['predicted']:.4g} | "
              f"{r['measured']:.4g} | {r['error_pct']:+.0f}% |")
    print("\nSources and length assumptions:")
    for r in {r["point"].split("/")[0]: r for r in rows}.values():
        print(f"- {r['point'].split('/')[0]}: {r['source']}; lengths: {r['lengths']}" +
              (f"; {r['note']}" if r["note"] else ""))


if __name__ == "__main__":
    main(sys.argv[1:])

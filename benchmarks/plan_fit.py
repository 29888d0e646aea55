"""Fit the step-time model's efficiency factors to the calibration points and print the calibration table.

    python benchmarks/plan_fit.py            # fit, then the table with the fitted factors
    python benchmarks/plan_fit.py --shipped  # the table with the factors shipped in gspo_cli/plan/profiles.py
    python benchmarks/plan_fit.py --write-docs  # regenerate the calibration table in docs/plan.md (shipped factors)

Fit points set the factors of their profile family (FIT_PLAN in gspo_cli/plan/calibration.py); held-out points
are only predicted. Paste the printed factors into profiles.py to ship them.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
    if "--write-docs" in argv:
        doc = Path(__file__).resolve().parents[1] / "docs" / "plan.md"
        doc.write_text(calibration.with_docs_table(doc.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote the calibration table into {doc}")
        return
    if "--shipped" in argv:
        profiles, fitted = dict(BUILTIN), {}
    else:
        profiles, fitted = fitted_profiles()
    for family, values in fitted.items():
        print(f"{family}: " + ", ".join(f"{k}={v:.6g}" for k, v in values.items()))
    print(calibration.markdown_table(profiles))


if __name__ == "__main__":
    main(sys.argv[1:])

"""Fit the step-time model's efficiency factors to the calibration points and print the calibration table.

    python benchmarks/plan_fit.py            # fit, then the table with the fitted factors
    python benchmarks/plan_fit.py --shipped  # the table with the factors shipped in gspo_cli/sizing/profiles.py
    python benchmarks/plan_fit.py --write-docs  # regenerate the calibration table in docs/plan.md (shipped factors)

Fit points set the factors of their profile family (FIT_PLAN in gspo_cli/plan/calibration.py); held-out points
are only predicted. Paste the printed factors into profiles.py to ship them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gspo_cli.plan import calibration
from gspo_cli.sizing.profiles import BUILTIN, Profile


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


DOC_BEGIN, DOC_END = "<!-- calibration:begin -->", "<!-- calibration:end -->"


def markdown_table(profiles: dict[str, Profile] | None = None) -> str:
    """The calibration table (every point, its role, prediction, measurement and error) and its sources."""
    rows = calibration.table(profiles)
    lines = ["| point | role | what | quantity | predicted | measured | error |", "|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        role = "**held-out**" if r["role"] == "held-out" else "fit"
        lines.append(f"| {r['point']} | {role} | {r['what']} | {r['quantity']} | {r['predicted']:.4g} | "
                     f"{r['measured']:.4g} | {r['error_pct']:+.0f}% |")
    lines += ["", "Sources and length assumptions:"]
    for r in {r["point"].split("/")[0]: r for r in rows}.values():
        lines.append(f"- {r['point'].split('/')[0]}: {r['source']}; lengths: {r['lengths']}"
                     + (f"; {r['note']}" if r["note"] else ""))
    return "\n".join(lines)


def with_docs_table(doc: str) -> str:
    """`doc` (docs/plan.md) with the table between its calibration markers regenerated from the shipped factors."""
    head, rest = doc.split(DOC_BEGIN, 1)
    _, tail = rest.split(DOC_END, 1)
    return f"{head}{DOC_BEGIN}\n{markdown_table()}\n{DOC_END}{tail}"


def main(argv: list[str]) -> None:
    if "--write-docs" in argv:
        doc = Path(__file__).resolve().parents[1] / "docs" / "plan.md"
        doc.write_text(with_docs_table(doc.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote the calibration table into {doc}")
        return
    if "--shipped" in argv:
        profiles, fitted = dict(BUILTIN), {}
    else:
        profiles, fitted = fitted_profiles()
    for family, values in fitted.items():
        print(f"{family}: " + ", ".join(f"{k}={v:.6g}" for k, v in values.items()))
    print(markdown_table(profiles))


if __name__ == "__main__":
    main(sys.argv[1:])

"""`gspo report RUN [RUN ...]`: PNG curves from metrics.jsonl and the runs' eval results, plus summary.md.

Reads verl's file-logger format (`{"step": N, "data": {metric: value}}`), which both engines write, so native
and verl runs report the same way (and compare on the metrics they share). One run: its charts and final
numbers in `<run>/report/`. Several: each chart overlays the runs, and summary.md puts them side by side
(default folder `$GSPO_HOME/reports/compare-<runs>/`). Charts whose metrics were never logged are listed in the
summary instead of drawn empty; a chart is drawn beside its final name and renamed when complete.
matplotlib (Agg) is imported only when drawing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from gspo_cli.errors import ConfigError, DataError
from gspo_cli.report import charts as C
from gspo_cli.report import compare, summary
from gspo_cli.report.data import RunData, label_runs, load_run, metrics_warning

# Overlays beyond this stop being readable (colours repeat, the legend outgrows the plot).
MAX_COMPARE = 8


def default_out(runs: list[RunData]) -> Path:
    if len(runs) == 1:
        return runs[0].path / "report"
    from gspo_cli import layout

    name = re.sub(r"[^A-Za-z0-9._-]+", "-", "-vs-".join(r.name for r in runs))[:120]
    return layout.gspo_home() / "reports" / f"compare-{name}"


def inside_run(folder: Path, run: Path) -> Path:
    """`folder` (a run's own report/), refused when a link takes it outside the run: a run folder from someone
    else must not make gspo write elsewhere (docs/security.md)."""
    if folder.is_symlink() or (folder.exists() and not folder.resolve().is_relative_to(run.resolve())):
        raise DataError(f"{folder} is a link out of run {run.name}: gspo writes a run's report only inside it",
                        "remove the link, or name another folder: gspo report RUN --out DIR")
    return folder


def draw_all(runs: list[RunData], out: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """Every chart that has data in some run -> ([(title, file)], [titles not charted])."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    C.style(plt)
    drawn, missing = [], []
    for chart in C.CHARTS:
        path = out / f"{chart.name}.png"
        tmp = out / f".{chart.name}.tmp.png"  # drawn beside, renamed when complete
        try:
            used = C.DRAWERS[chart.kind](plt, chart, runs, tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)  # no half-drawn leftovers beside the report
            plt.close("all")
            raise
        if used is None:
            if not chart.optional:
                missing.append(chart.title.lower())
            path.unlink(missing_ok=True)  # a chart from an older report must not outlive its data
            continue
        os.replace(tmp, path)
        drawn.append((chart.title, path.name))
    return drawn, missing


def make_report(run: Path | list[Path], out: Path | None = None) -> dict[str, Any]:
    """Draw every chart that has data and write summary.md; returns the report index (what --json prints)."""
    paths = [Path(p) for p in (run if isinstance(run, list | tuple) else [run])]
    if len(paths) > MAX_COMPARE:
        raise ConfigError(f"{len(paths)} runs to compare; charts stay readable up to {MAX_COMPARE}",
                          "compare fewer runs at a time")
    runs = [load_run(p) for p in paths]
    empty = [r.path for r in runs if not r.series and not r.evals]
    if empty:
        raise DataError(f"{empty[0]} has no metrics.jsonl data and no eval results",
                        "is this a run folder? train first (metrics are appended every step)")
    keys = label_runs(runs)
    out = Path(out) if out else inside_run(default_out(runs), runs[0].path) if len(runs) == 1 else default_out(runs)
    out.mkdir(parents=True, exist_ok=True)
    charts, missing = draw_all(runs, out)
    if len(runs) == 1:
        text = summary.single_summary(runs[0], charts, missing)
    else:
        text = compare.compare_summary(runs, keys, charts, missing)
    summary.write(out, text)
    index: dict[str, Any] = {"run": str(runs[0].path), "runs": [str(r.path) for r in runs], "out": str(out),
                             "charts": [str(out / f) for _, f in charts], "summary": str(out / "summary.md"),
                             "missing": missing, "warnings": [w for w in map(metrics_warning, runs) if w]}
    if len(runs) == 1:
        index.update(final=summary.final_rows(runs[0].series), evals=summary.eval_rows(runs[0].evals))
    else:
        index.update(labels={r.name: r.label for r in runs}, differing=keys,
                     table=compare.compare_index(runs, keys))
    return index

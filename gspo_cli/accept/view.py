"""How `gspo accept` prints: the verdict table (one row per metric: value, baseline, difference, tolerance,
verdict), the hint of each failure, the baseline's source; `--list` as a table of baselines with their sources."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from gspo_cli.accept import hints
from gspo_cli.accept import rules as R
from gspo_cli.accept.service import shown
from gspo_cli.shell import quote
from gspo_cli.untrusted import clean


def _t(value: Any) -> str:
    """A baseline file's text as printed: control characters and escape sequences removed, rich markup escaped."""
    return escape(clean(value))

_STYLE = {"pass": "ok", "fail": "failed", "missing": "failed", "warn": "warn", "skipped": "skip"}


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.5g}"


def _diff(m: R.MetricVerdict, rule_kind: str) -> str:
    if m.difference is None:
        return "-"
    return f"{m.difference:+.1f} %" if rule_kind == "relative" else f"{m.difference:+.4g}"


def source_line(b: Any) -> str:
    s = b.source
    if s.get("repo"):
        return _t(f"{s['repo']} {s.get('path', '')} @ {str(s.get('commit', ''))[:12]}")
    if isinstance(b.recorded, dict):
        r = b.recorded
        return _t(f"recorded {r.get('date', '')} on {r.get('host', '')} from {r.get('run', '')}")
    return _t(b.path or "-")


def render_job(job: Any, console: Any) -> None:
    """Before the run: the baseline, what runs (the user's own preset and sets), what the baseline recorded but
    gspo does not run (a baseline file is data; docs/security.md)."""
    b = job.baseline
    console.print(f"accept: baseline {_t(b.id)} ({'shipped with gspo' if b.shipped else 'file ' + _t(b.path)})",
                  highlight=False)
    sets = " ".join(f"--set {s}" for s in shown(job.sets))
    if job.run:
        console.print(f"  runs:        nothing (judges the finished run {_t(job.run)})", highlight=False)
    else:
        console.print(f"  runs:        preset {_t(job.preset or '-')} {_t(sets)}".rstrip(), highlight=False)
    if not b.shipped:
        recorded = " ".join(f"--set {s}" for s in shown(b.sets)) or "(no --set)"
        console.print(f"  recorded:    preset {_t(b.preset or '-')} {_t(recorded)} (shown, not run: a baseline file "
                      "is data)", highlight=False)
    if job.not_applied:
        console.print(f"  not applied: {_t(' '.join('--set ' + s for s in shown(job.not_applied)))} (to rerun the recorded "
                      "job, give them yourself)", highlight=False)


def judged_table(outcome: Any):
    """One row per metric. The compared numbers are never cut ("0.13…" at 80 columns): their columns are as wide
    as their widest value; the metric name folds and the tolerance wraps to make room."""
    from rich.table import Table

    from gspo_cli.console import STATUS_STYLE

    b, v = outcome.baseline, outcome.verdict
    kinds = {r.metric: r.kind for r in b.rules}
    rows = [(_t(m.metric), _num(m.value), _num(m.baseline), _diff(m, kinds.get(m.metric, "absolute")),
             m.tolerance.split(" (")[0], m.status) for m in v.metrics]
    table = Table(title=_t(f"gspo accept: run {outcome.run_dir.name} vs baseline {b.id}"), title_justify="left")
    table.add_column("metric", overflow="fold", min_width=12)
    for i, col in enumerate(("run", "baseline", "difference"), start=1):
        table.add_column(col, justify="right", no_wrap=True, min_width=max([len(col)] + [len(r[i]) for r in rows]))
    table.add_column("tolerance")
    table.add_column("verdict", no_wrap=True, min_width=len("missing"))
    for *cells, status in rows:
        table.add_row(*cells, f"[{STATUS_STYLE[_STYLE[status]]}]{status}[/]")
    return table


def render(outcome: Any, console: Any) -> None:
    b, v = outcome.baseline, outcome.verdict
    if v is None:  # --record
        console.print(f"Recorded baseline {outcome.recorded_to}")
        console.print(f"  from run {outcome.run_dir} (preset {outcome.preset}; --set {_t(' '.join(shown(outcome.sets)))})",
                      highlight=False)
        for rule in b.rules:
            extra = "  (advisory: noisy host)" if rule.advisory else ""
            if rule.widened_from is not None:
                extra += f"  (widened to the spread of {len(b.recorded.get('repeats', []))} runs)"
            console.print(f"  {_t(rule.metric):<38} {_num(b.values.get(rule.metric)):>12}  {_t(rule.describe())}{extra}",
                          highlight=False)
        console.print(f"Judge a run against it: gspo accept --preset {outcome.preset} --baseline {outcome.recorded_to}",
                      highlight=False)
        return
    console.print(judged_table(outcome))
    console.print(f"run: mean of steps {', '.join(map(str, v.window_steps)) or 'none (no step in 5-14)'}; "
                  f"{R.MEMORY}: step {v.last_step} (as check_npu.py reduces a log)",
                  highlight=False)
    console.print(f"baseline: {_t(b.title)}", highlight=False)
    console.print(f"  source: {source_line(b)}", highlight=False)
    if b.source.get("checker"):
        c = b.source["checker"]
        console.print(f"  rules:  {_t(c.get('repo'))} {_t(c.get('path'))} @ {_t(str(c.get('commit'))[:12])}", highlight=False)
    if b.path:
        console.print(f"  file:   {_t(b.path)}", highlight=False)
    for m in v.metrics:
        if m.note and m.status in ("warn", "skipped"):
            console.print(f"{m.status}: {_t(m.metric)}: {_t(m.note)}", highlight=False)
    for m in v.failures:
        console.print(f"[red]fail[/]: {_t(m.metric)}: {_t(m.note) + '; ' if m.note else ''}{_t(hints.hint(m.metric))}",
                      highlight=False)
    word = "[green]PASS[/]" if v.passed else "[bold red]FAIL[/]"
    n_fail = len(v.failures)
    console.print(f"Verdict: {word}" + (f" ({n_fail} of {len(v.metrics)} metrics out of tolerance)" if n_fail else
                                       " (every judged metric within the baseline's tolerance)"))


def list_data(found: dict[str, list[Any]]) -> dict[str, list[dict[str, Any]]]:
    """`gspo accept --list --json`: each baseline's facts and its file, by kind (upstream, recorded)."""
    return {k: [b.as_dict() | {"file": b.path} for b in v] for k, v in found.items()}


def render_list(found: dict[str, list[Any]], console: Any) -> None:
    console.print("[bold]Acceptance baselines[/] (`gspo accept --preset NAME`; --baseline ID|FILE)")
    for kind, items in found.items():
        if not items:
            console.print(f"{kind}: none" + (" (gspo accept --preset NAME --record)" if kind == "recorded" else ""))
        for b in items:
            console.print(f"{kind}: [bold]{_t(b.id)}[/]  {_t(b.title)}", highlight=False)
            console.print(f"  machine:   {_t(b.machine)}", highlight=False)
            runs_with = (f"gspo accept --preset {quote(b.preset)}  (verl's {b.route} route)" if b.preset else "-")
            console.print(f"  runs with: {_t(runs_with)}", highlight=False)
            for rule in b.rules:
                console.print(f"    {_t(rule.metric):<36} {_num(b.values.get(rule.metric)):>10}  {_t(rule.describe())}"
                              + ("  advisory" if rule.advisory else ""), highlight=False)
            console.print(f"  source:    {source_line(b)}", highlight=False)
            if b.source.get("url"):
                console.print(f"             {_t(b.source['url'])}", highlight=False)
            if b.source.get("job_script"):
                j = b.source["job_script"]
                console.print(f"  job:       {_t(j.get('repo'))} {_t(j.get('path'))} @ {_t(str(j.get('commit'))[:12])}", highlight=False)
    c = next((b.source["checker"] for b in found.get("upstream", []) if b.source.get("checker")), None)
    if c:
        console.print(f"Rules: {_t(c.get('repo'))} {_t(c.get('path'))} @ {_t(str(c.get('commit'))[:12])}", highlight=False)

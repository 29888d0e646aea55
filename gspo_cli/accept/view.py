"""How `gspo accept` prints: the verdict table (one row per metric: value, baseline, difference, tolerance,
verdict), the hint of each failure, the baseline's source; `--list` as a table of baselines with their sources."""

from __future__ import annotations

from typing import Any

from gspo_cli.accept import hints
from gspo_cli.accept import rules as R

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
        return f"{s['repo']} {s.get('path', '')} @ {str(s.get('commit', ''))[:12]}"
    if b.recorded:
        return f"recorded {b.recorded.get('date', '')} on {b.recorded.get('host', '')} from {b.recorded.get('run', '')}"
    return b.path or "-"


def render(outcome: Any, console: Any) -> None:
    from rich.table import Table

    from gspo_cli.console import STATUS_STYLE

    b, v = outcome.baseline, outcome.verdict
    if v is None:  # --record
        console.print(f"Recorded baseline {outcome.recorded_to}")
        console.print(f"  from run {outcome.run_dir} (preset {outcome.preset}; --set {' '.join(outcome.sets)})",
                      highlight=False)
        for rule in b.rules:
            extra = "  (advisory: noisy host)" if rule.advisory else ""
            if rule.widened_from is not None:
                extra += f"  (widened to the spread of {len(b.recorded.get('repeats', []))} runs)"
            console.print(f"  {rule.metric:<38} {_num(b.values.get(rule.metric)):>12}  {rule.describe()}{extra}",
                          highlight=False)
        console.print(f"Judge a run against it: gspo accept --preset {outcome.preset} --baseline {outcome.recorded_to}",
                      highlight=False)
        return
    kinds = {r.metric: r.kind for r in b.rules}
    table = Table(title=f"gspo accept: run {outcome.run_dir.name} vs baseline {b.id}", title_justify="left")
    for col in ("metric", "run", "baseline", "difference", "tolerance", "verdict"):
        table.add_column(col, justify="right" if col in ("run", "baseline", "difference") else "left",
                         no_wrap=col in ("metric", "verdict"))
    for m in v.metrics:
        table.add_row(m.metric, _num(m.value), _num(m.baseline), _diff(m, kinds.get(m.metric, "absolute")),
                      m.tolerance.split(" (")[0], f"[{STATUS_STYLE[_STYLE[m.status]]}]{m.status}[/]")
    console.print(table)
    console.print(f"run: mean of steps {', '.join(map(str, v.window_steps)) or 'none (no step in 5-14)'}; "
                  f"{R.MEMORY}: step {v.last_step} (as check_npu.py reduces a log)",
                  highlight=False)
    console.print(f"baseline: {b.title}", highlight=False)
    console.print(f"  source: {source_line(b)}", highlight=False)
    if b.source.get("checker"):
        c = b.source["checker"]
        console.print(f"  rules:  {c['repo']} {c['path']} @ {c['commit'][:12]}", highlight=False)
    if b.path:
        console.print(f"  file:   {b.path}", highlight=False)
    for m in v.metrics:
        if m.note and m.status in ("warn", "skipped"):
            console.print(f"{m.status}: {m.metric}: {m.note}", highlight=False)
    for m in v.failures:
        console.print(f"[red]fail[/]: {m.metric}: {m.note + '; ' if m.note else ''}{hints.hint(m.metric)}",
                      highlight=False)
    word = "[green]PASS[/]" if v.passed else "[bold red]FAIL[/]"
    n_fail = len(v.failures)
    console.print(f"Verdict: {word}" + (f" ({n_fail} of {len(v.metrics)} metrics out of tolerance)" if n_fail else
                                       " (every judged metric within the baseline's tolerance)"))


def render_list(found: dict[str, list[Any]], console: Any) -> None:
    console.print("[bold]Acceptance baselines[/] (`gspo accept --preset NAME`; --baseline ID|FILE)")
    for kind, items in found.items():
        if not items:
            console.print(f"{kind}: none" + (" (gspo accept --preset NAME --record)" if kind == "recorded" else ""))
        for b in items:
            console.print(f"{kind}: [bold]{b.id}[/]  {b.title}", highlight=False)
            console.print(f"  machine:   {b.machine}", highlight=False)
            runs_with = (f"gspo accept --preset {b.preset}  (verl's {b.route} route)" if b.preset else "-")
            console.print(f"  runs with: {runs_with}", highlight=False)
            for rule in b.rules:
                console.print(f"    {rule.metric:<36} {_num(b.values.get(rule.metric)):>10}  {rule.describe()}"
                              + ("  advisory" if rule.advisory else ""), highlight=False)
            console.print(f"  source:    {source_line(b)}", highlight=False)
            if b.source.get("url"):
                console.print(f"             {b.source['url']}", highlight=False)
            if b.source.get("job_script"):
                j = b.source["job_script"]
                console.print(f"  job:       {j['repo']} {j['path']} @ {j['commit'][:12]}", highlight=False)
    c = next((b.source["checker"] for b in found.get("upstream", []) if b.source.get("checker")), None)
    if c:
        console.print(f"Rules: {c['repo']} {c['path']} @ {c['commit'][:12]}", highlight=False)

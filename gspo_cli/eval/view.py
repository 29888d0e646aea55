"""How `gspo eval` prints (eval/flow.py's `Evaluated`): one model's metrics table, a run's accuracy per checkpoint,
or one table across benchmarks and checkpoints; the settings and files on stderr. With --json the command prints
results.json as is (console.emit)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from gspo_cli.console import err, out
from gspo_cli.eval.flow import MANY, ONE, Evaluated
from gspo_cli.shell import quote


def render(evaluated: Evaluated) -> None:
    if evaluated.kind == ONE:
        render_one(evaluated.results)
        return
    if evaluated.kind == MANY:
        render_many(evaluated.results)
        if evaluated.run is not None:
            err.print(f"Chart of every benchmark per step: gspo report {quote(evaluated.run)}", highlight=False,
                      markup=False)
        return
    render_steps(evaluated.results)
    err.print(f"Chart of accuracy per step: gspo report {quote(str(evaluated.run))}", highlight=False, markup=False)


def render_one(results: dict[str, Any]) -> None:
    m, s = results["metrics"], results["settings"]
    model = results["model"]
    title = (f"{results['benchmark']}: {model.get('run_name') or model['path']}"
             + (f" step {model['step']}" if model.get("step") is not None else ""))
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("± stderr", justify="right")
    n = m["n"]
    rows = [f"avg@{n}"] + [f"pass@{k}" for k in s["k"]] + [f"maj@{k}" for k in s["k"]]
    for key in rows:
        table.add_row(key, f"{100 * m[key]:.2f}%", f"{100 * m.get(key + '_stderr', 0.0):.2f}")
    table.add_row("extraction rate", f"{100 * m['extraction_rate']:.1f}%", "")
    table.add_row("truncation rate", f"{100 * m['truncation_rate']:.1f}%", "")
    table.add_row("response tokens mean / p50 / p90",
                  f"{m['response_length_mean']:.0f} / {m['response_length_p50']:.0f} / {m['response_length_p90']:.0f}",
                  "")
    out.print(table)
    thinking = "on" if s["enable_thinking"] else "off"
    err.print(
        f"{m['num_problems']} problems x n={n}; temperature {s['temperature']}, top_p {s['top_p']}, top_k {s['top_k']}, "
        f"max_tokens {s['max_tokens']}, prompt {s['prompt_style'] or 'as prepared'}, thinking {thinking}; "
        f"backend {s['backend']} on {s['device']}; {results['timing']['tokens_per_s']} tokens/s",
        highlight=False,
    )
    err.print(f"Results: {results['files']['results']}\nSamples: {results['files']['samples']}", highlight=False)


def render_steps(results: list[dict[str, Any]]) -> None:
    """One row per checkpoint: the accuracy-vs-step table."""
    first = results[0]
    n, ks = first["metrics"]["n"], first["settings"]["k"]
    table = Table(title=f"{first['benchmark']}: {first['model'].get('run_name')}, per checkpoint",
                  title_justify="left")
    for col in ["step", f"avg@{n}", "± stderr"] + [f"pass@{k}" for k in ks if k > 1] + ["extracted", "truncated"]:
        table.add_column(col, justify="right")
    for r in results:
        m = r["metrics"]
        table.add_row(str(r["model"]["step"]), f"{100 * m[f'avg@{n}']:.1f}%",
                      f"{100 * m.get(f'avg@{n}_stderr', 0.0):.1f}",
                      *[f"{100 * m[f'pass@{k}']:.1f}%" for k in ks if k > 1],
                      f"{100 * m['extraction_rate']:.1f}%", f"{100 * m['truncation_rate']:.1f}%")
    out.print(table)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render_many(results: list[dict[str, Any]]) -> None:
    """One row per (benchmark, checkpoint): avg@n ± stderr, pass@k and maj@k at each benchmark's largest k, the
    extraction and truncation rates; narrow enough for an 80-column terminal."""
    first = results[0]["model"]
    who = first.get("run_name") or first["path"]
    ns = sorted({r["metrics"]["n"] for r in results})
    avg = f"avg@{ns[0]} ± se" if len(ns) == 1 else "avg@n ± se"
    table = Table(title=f"{', '.join(dict.fromkeys(r['benchmark'] for r in results))}: {who}", title_justify="left")
    for col in ("benchmark", "step", avg, "pass@k", "maj@k", "extr.", "trunc."):
        table.add_column(col, justify="left" if col == "benchmark" else "right", no_wrap=True)
    for r in results:
        m, n, k = r["metrics"], r["metrics"]["n"], max(r["settings"]["k"])
        step = r["model"].get("step")
        table.add_row(r["benchmark"], "-" if step is None else str(step),
                      f"{_pct(m[f'avg@{n}'])} ± {100 * m.get(f'avg@{n}_stderr', 0.0):.1f}",
                      f"{_pct(m.get(f'pass@{k}'))} @{k}", f"{_pct(m.get(f'maj@{k}'))} @{k}",
                      _pct(m["extraction_rate"]), _pct(m["truncation_rate"]))
    out.print(table)
    per = dict.fromkeys(f"{r['benchmark']} {r['metrics']['num_problems']} x n={r['metrics']['n']}" for r in results)
    err.print(f"Problems x samples: {'; '.join(per)}; pass@k and maj@k at the largest k (@k); results.json of each "
              "in its folder (--json prints them all)", highlight=False)

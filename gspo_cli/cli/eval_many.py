"""`gspo eval aime2024,aime2025,amc2023 --model ...`: several benchmarks in one job, each checkpoint loaded once
(one vLLM engine or one HF model) for all of them, then one table across benchmarks and checkpoints."""

from __future__ import annotations

import time

import typer

from gspo_cli.shell import quote


def eval_many(req, loaded, refs, *, address, local: bool, json_out: bool) -> None:
    """Submit one job for the (benchmark, checkpoint) pairs not yet evaluated with these settings, then print every
    pair's results: a table, or with --json the list of results.json (by benchmark, then step)."""
    from gspo_cli.console import err
    from gspo_cli.eval import request, service
    from gspo_cli.jobs import client as jobs

    todo = service.pending(req, loaded, refs, force=req.force)
    done = len(req.names()) * len(refs) - len(todo)
    if done:
        err.print(f"Already evaluated with these settings (--force redoes them): {done} of "
                  f"{len(req.names()) * len(refs)} benchmark x checkpoint pairs", highlight=False)
    run = refs[0].run if getattr(refs[0], "run", None) is not None else None
    if todo:
        steps = list(dict.fromkeys(ref.step for _, ref in todo))
        if run is not None and None not in steps:
            req.model = f"{run.resolve()}:{','.join(map(str, steps))}"  # only the checkpoints with work left
        req.stamp = req.stamp or time.strftime("%Y%m%d-%H%M%S")  # the folders of a model that is not a run's
        benches = list(dict.fromkeys(one.benchmark for one, _ in todo))
        where = f"{len(steps)} checkpoint(s) of {run.name}" if run is not None else str(refs[0].path)
        err.print(f"Evaluating {', '.join(benches)} on {where} in one job, each checkpoint loaded once for all of "
                  "them", highlight=False)
        from gspo_cli.engines import node_resources
        from gspo_cli.env.exports import job_vars

        spec = jobs.JobSpec("eval", request.payload(req), preset=loaded, run=run.name if run is not None else None,
                            env_vars=job_vars(loaded), node=node_resources(loaded))
        code = jobs.run_job(spec, address=address, local=local)
        if code != 0:
            raise typer.Exit(code)
    results = [r for name in req.names() for r in service.results_of(req.one(name), loaded, refs)]
    if json_out:
        from gspo_cli.console import print_json

        print_json(results)
        return
    render_many(results)
    if run is not None:
        err.print(f"Chart of every benchmark per step: gspo report {quote(run.name)}", highlight=False, markup=False)


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render_many(results: list[dict]) -> None:
    """One row per (benchmark, checkpoint): avg@n ± stderr, pass@k and maj@k at each benchmark's largest k, the
    extraction and truncation rates; narrow enough for an 80-column terminal."""
    from rich.table import Table

    from gspo_cli.console import err, out

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

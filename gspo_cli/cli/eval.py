"""`gspo eval BENCHMARK --model ...`: sample n responses per problem, score them, report avg@n / pass@k / maj@k."""

from __future__ import annotations

import typer

from gspo_cli.cli import options
from gspo_cli.config import devices
from gspo_cli.shell import quote


def eval_command(
    benchmark: str = typer.Argument(..., help="aime2024, aime2025, amc2023, arith, or any name with --data PATH "
                                    "(verl-schema parquet); several, comma-separated (aime2024,aime2025,amc2023): one "
                                    "job, each checkpoint loaded once for all of them, one table."),
    model: str = typer.Option("latest", "--model", "-m",
                              help="`latest`, a run name, RUN:STEP, RUN:all or RUN:20,40,60 (several checkpoints in "
                                   "one job), a run or checkpoint folder, an HF folder, or a hub id (org/name)."),
    preset: str = options.preset(help="Preset whose eval section, paths and cluster to use (default for a run's "
                                      "checkpoints: the run's own resolved preset, runs/RUN/config.yaml)."),
    n: int = typer.Option(None, "--n", help="Samples per problem (avg@n). Every setting flag defaults to the preset's "
                          "eval.benchmarks.BENCHMARK value (see `gspo presets show PRESET --resolved`)."),
    k: str = typer.Option(None, "--k", help="Comma-separated k for pass@k and maj@k, each <= n: --k 1,4,16."),
    backend: str = typer.Option(None, "--backend", help="vllm or hf; default: the preset's, else from the device."),
    data: str = typer.Option(None, "--data", help="Read this verl-schema parquet instead of the prepared benchmark."),
    temperature: float = typer.Option(None, "--temperature", help="Sampling temperature (0 = greedy)."),
    top_p: float = typer.Option(None, "--top-p"),
    top_k: int = typer.Option(None, "--top-k", help="-1 disables top-k."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Response token limit (hitting it = truncated)."),
    prompt_style: str = typer.Option(None, "--prompt-style", help="dapo (Answer: line), boxed, or plain."),
    thinking: bool = typer.Option(None, "--thinking/--no-thinking", help="Qwen3 chat template's enable_thinking."),
    device: str = typer.Option(None, "--device", help=f"{devices.spoken()} (default: the preset's eval.device, auto: "
                                                      "the accelerator when there is one)."),
    batch_size: int = typer.Option(None, "--batch-size", help="hf backend: sequences per generate call."),
    tp: int = typer.Option(None, "--tp", help="vllm backend: tensor-parallel size per engine."),
    limit: int = typer.Option(None, "--limit", help="Evaluate only the first N problems."),
    seed: int = typer.Option(None, "--seed", help="Sampling seed."),
    out: str = typer.Option(None, "--out", help="Output folder (default runs/<run>/eval/<benchmark>-<step>-<digest>, "
                                                "the digest naming the sampling settings: other settings, another "
                                                "folder)."),
    sets: list[str] | None = options.sets("eval.benchmarks.aime2024.n=64"),
    local: bool = options.local(),
    address: str = options.address(),
    force: bool = options.force("Evaluate again the checkpoints already evaluated with the same settings."),
    json_out: bool = options.json_out("Print results.json to stdout (a list for several steps)."),
    trust_remote_code: bool = typer.Option(False, "--trust-remote-code", help="Let the model folder's own Python "
                                           "code (config.json auto_map) run; never taken from a run folder."),
) -> None:
    """Evaluate a model on a benchmark: avg@n, unbiased pass@k, maj@k, with every response saved."""
    from gspo_cli.eval import request, service, settings

    req = request.EvalRequest(
        benchmark=benchmark, model=model, preset=preset, sets=list(sets or []), n=n, k=_k_list(k),
        temperature=temperature, top_p=top_p, top_k=top_k, max_tokens=max_tokens, prompt_style=prompt_style,
        enable_thinking=thinking, data=data, backend=backend, device=device, batch_size=batch_size, tp=tp,
        limit=limit, seed=seed, out=out, trust_remote_code=trust_remote_code, force=force,
    )
    loaded = service.load_preset(req)  # fail fast here on a bad preset or --set, before a job is submitted
    for name in req.names():
        settings.benchmark_settings(name, loaded, req.flags())  # and on a bad flag
    refs = service.resolve_all(req, loaded)  # and on a --model that names nothing loadable
    if req.preset is None and (config := service.run_preset(refs)) is not None:
        from gspo_cli.console import err

        req.preset = str(config)  # a run's checkpoints are evaluated with the run's own resolved preset
        loaded = service.load_preset(req)
        for name in req.names():
            settings.benchmark_settings(name, loaded, req.flags())
        err.print(f"Preset: the run's own ({config}); --preset NAME to use another", highlight=False)
    _say_trust(req, loaded)
    _check_hub_model(refs)
    if len(req.names()) > 1:
        from gspo_cli.cli.eval_many import eval_many

        eval_many(req, loaded, refs, address=address, local=local, json_out=json_out)
    elif len(refs) > 1:
        _eval_steps(req, loaded, refs, force=force, address=address, local=local, json_out=json_out)
    else:
        _eval_one(req, loaded, refs[0], force=force, address=address, local=local, json_out=json_out)


def _say_trust(req, loaded) -> None:
    """The visible line of trust_remote_code on: where it came from (the user's flag or own preset)."""
    from gspo_cli.eval.request import trusts_remote_code

    if trusts_remote_code(req, loaded):
        from gspo_cli.console import err

        where = "--trust-remote-code" if req.trust_remote_code else f"preset {loaded.name}: model.trust_remote_code"
        err.print(f"trust_remote_code: on ({where}): the model folder's own Python code (auto_map) runs",
                  highlight=False, markup=False)


def _check_hub_model(refs) -> None:
    """A hub id that is neither cached nor reachable fails here, in seconds, not after a minute inside the job."""
    for ref in refs:
        if getattr(ref, "kind", "") == "hub":
            from gspo_cli.models.reachable import require_hub_id

            require_hub_id(str(ref.path))


def _k_list(k: str | None) -> list[int] | None:
    from gspo_cli.errors import ConfigError

    if not k:
        return None
    try:
        return [int(x) for x in k.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--k takes comma-separated integers, got {k!r}", "example: --k 1,4,16") from None


def _eval_one(req, loaded, ref, *, force: bool, address, local: bool, json_out: bool) -> None:
    """One model: its request file beside the results, one job, then the metrics table. A checkpoint already
    evaluated with these settings is shown, not redone (unless --force)."""
    from gspo_cli.console import err
    from gspo_cli.eval import request, service
    from gspo_cli.jobs import client as jobs

    done = None if force else service.evaluated_dir(req, loaded, ref)
    if done is None:  # a folder holding another result (--out) is refused here, before any job
        service.check_replace(service.output_dir(req, loaded, ref), service.wanted_settings(req, loaded))
    if done is not None:
        err.print(f"Already evaluated with these settings (--force redoes it): {done}", highlight=False)
        out_dir = done
    else:
        out_dir = service.output_dir(req, loaded, ref)
        req.out = str(out_dir)
        request_file = request.write_request(req, out_dir / request.REQUEST_FILE)
        # --json prints results.json from disk (shared $GSPO_HOME), not the job's trimmed result event
        from gspo_cli.engines import node_resources
        from gspo_cli.env.exports import job_vars

        run = ref.run.name if getattr(ref, "run", None) is not None else None
        spec = jobs.JobSpec("eval", request_file, preset=loaded, run=run, env_vars=job_vars(loaded),
                            node=node_resources(loaded))
        code = jobs.run_job(spec, address=address, local=local)
        if code != 0:
            raise typer.Exit(code)
    results = service.read_results(out_dir / service.RESULTS)
    if json_out:
        from gspo_cli.console import print_json

        print_json(results)
    else:
        render(results)


def _eval_steps(req, loaded, refs, *, force: bool, address, local: bool, json_out: bool) -> None:
    """RUN:all / RUN:20,40: one job for the checkpoints not yet evaluated with these settings, then a table."""
    from gspo_cli.console import err
    from gspo_cli.eval import request, service
    from gspo_cli.jobs import client as jobs

    todo, done = service.split_evaluated(req, loaded, refs, force=force)
    run = refs[0].run
    if done:
        err.print(f"Already evaluated with these settings (--force redoes them): steps {_steps_text(done)}",
                  highlight=False)
    if todo:
        req.model = f"{run.resolve()}:{','.join(map(str, todo))}"
        err.print(f"Evaluating {req.benchmark} on {len(todo)} checkpoints of {run.name} in one job: steps "
                  f"{_steps_text(todo)}", highlight=False)
        from gspo_cli.engines import node_resources
        from gspo_cli.env.exports import job_vars

        spec = jobs.JobSpec("eval", request.payload(req), preset=loaded, run=run.name, env_vars=job_vars(loaded),
                            node=node_resources(loaded))
        code = jobs.run_job(spec, address=address, local=local)
        if code != 0:
            raise typer.Exit(code)
    results = service.results_of(req, loaded, refs)
    if json_out:
        from gspo_cli.console import print_json

        print_json(results)
    else:
        render_steps(results)
        err.print(f"Chart of accuracy per step: gspo report {quote(run.name)}", highlight=False, markup=False)


def _steps_text(steps: list[int]) -> str:
    return ", ".join(map(str, steps))


def render_steps(results: list[dict]) -> None:
    """One row per checkpoint: the accuracy-vs-step table."""
    from rich.table import Table

    from gspo_cli.console import out

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


def render(results: dict) -> None:
    from rich.table import Table

    from gspo_cli.console import err, out

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

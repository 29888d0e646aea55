"""`gspo eval BENCHMARK --model ...`: sample n responses per problem, score them, report avg@n / pass@k / maj@k."""

from __future__ import annotations

import typer

from gspo_cli.cli import options
from gspo_cli.config import devices


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
    from gspo_cli.console import emit
    from gspo_cli.engines import node_resources
    from gspo_cli.eval import flow, request, view

    req = request.EvalRequest(
        benchmark=benchmark, model=model, preset=preset, sets=list(sets or []), n=n, k=_k_list(k),
        temperature=temperature, top_p=top_p, top_k=top_k, max_tokens=max_tokens, prompt_style=prompt_style,
        enable_thinking=thinking, data=data, backend=backend, device=device, batch_size=batch_size, tp=tp,
        limit=limit, seed=seed, out=out, trust_remote_code=trust_remote_code, force=force,
    )
    loaded, refs = flow.prepare(req)  # every error a bad preset, flag or --model makes, before a job is submitted
    evaluated = flow.evaluate(req, loaded, refs, address=address, local=local, node=node_resources)
    if evaluated.exit_code:
        raise typer.Exit(evaluated.exit_code)
    emit(json_out, evaluated.results, view.render, evaluated)


def _k_list(k: str | None) -> list[int] | None:
    from gspo_cli.errors import ConfigError

    if not k:
        return None
    try:
        return [int(x) for x in k.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--k takes comma-separated integers, got {k!r}", "example: --k 1,4,16") from None

"""Evaluate one model on one or more benchmarks, with settings and problems resolved once per benchmark
(`service.run_evals` loops over checkpoints).

Per model: tokenizer -> one backend (one vLLM engine or one HF model), shared by every benchmark of the request ->
per benchmark: prompts -> generate -> score through the reward's batch pool -> metrics -> `samples.jsonl` (every
response) and `results.json` written atomically, results last: its presence means that benchmark's eval finished.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gspo_cli.config import devices
from gspo_cli.jobs import events


@dataclass
class EvalContext:
    req: Any  # request.EvalRequest
    preset: Any  # Preset or None
    settings: Any  # settings.EvalSettings
    problems: list
    device: str


class _Progress:
    """Progress events, at most every `every_s` seconds (plus the last one)."""

    def __init__(self, task: str, every_s: float = 0.5):
        self.task, self.every_s, self.last = task, every_s, 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - self.last >= self.every_s:
            self.last = now
            events.progress(done, total, task=self.task)


def _sections(preset, model_dir: Path):
    """The preset's cluster, rollout and model sections, or the schema's defaults for a bare `--model`."""
    from gspo_cli.config.schema import ClusterSection, ModelSection, RolloutSection

    if preset is not None:
        return preset.cluster, preset.rollout, preset.model
    return ClusterSection(), RolloutSection(), ModelSection(path=str(model_dir))


def _backend_options(ctxs: list[EvalContext], model_dir: Path, tokenizer, prompts: list[list[str]],
                     backend_name: str) -> dict[str, Any]:
    """The backend's options for every benchmark it will serve: what the model and preset fix, and (vLLM) a context
    long enough for the longest prompt plus the largest max_tokens among them."""
    from gspo_cli.eval.request import trusts_remote_code

    ctx = ctxs[0]  # the model, device and preset are the same for every benchmark of one request
    cluster, rollout, model = _sections(ctx.preset, model_dir)
    options: dict[str, Any] = {
        "device": ctx.device, "batch_size": ctx.settings.batch_size,
        "trust_remote_code": trusts_remote_code(ctx.req, ctx.preset),
        # bf16 generate on CPU is slow and gains nothing for eval-sized models (the device table's eval_dtype)
        "dtype": devices.kind(ctx.device).eval_dtype or model.dtype,
        "gpu_memory_utilization": rollout.gpu_memory_utilization, "tp": ctx.req.tp or rollout.tensor_parallel_size,
        "address": cluster.address,
    }
    if backend_name == "vllm":
        # vLLM's CPU settings (VLLM_CPU_KVCACHE_SPACE, ...) are the preset's env.vars (backends/vllm_target.py)
        options["env_vars"] = dict(ctx.preset.env.vars) if ctx.preset is not None else {}
        options["enforce_eager"] = rollout.enforce_eager
        # prompt + response must fit the engine's context, for every benchmark it serves
        options["max_model_len"] = max(
            max(len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in ps) + c.settings.max_tokens
            for c, ps in zip(ctxs, prompts, strict=True))
    return options


def _prompts(ctx: EvalContext, tokenizer) -> list[str]:
    from gspo_cli.eval import benchmarks

    messages = [benchmarks.restyle(p, ctx.settings.prompt_style) for p in ctx.problems]
    return [benchmarks.render_prompt(tokenizer, m, ctx.settings.enable_thinking) for m in messages]


def _generate(ctx: EvalContext, backend, prompts: list[str]) -> tuple[list, float]:
    """Generations per problem of one benchmark on the shared backend, and the seconds it took."""
    from gspo_cli.eval.types import Sampling

    settings = ctx.settings
    sampling = Sampling(temperature=settings.temperature, top_p=settings.top_p, top_k=settings.top_k,
                        max_tokens=settings.max_tokens, seed=settings.seed)
    if hasattr(backend, "batch_size"):  # the hf backend's sequences per call: each benchmark's own setting
        backend.batch_size = max(1, int(settings.batch_size))
    t0 = time.monotonic()
    generations = backend.generate(prompts, sampling, settings.n, _Progress(f"generate {ctx.req.benchmark}"))
    return generations, time.monotonic() - t0


def _score(ctx: EvalContext, generations) -> tuple[list[dict], float]:
    from gspo_cli.rewards import score_batch
    from gspo_cli.rewards.backends import scorer_for

    events.message(f"scoring {len(ctx.problems) * ctx.settings.n} responses")
    items = []
    for p, gens in zip(ctx.problems, generations, strict=True):
        extra = dict(p.extra_info)
        if ctx.settings.prompt_style:
            extra["prompt_style"] = ctx.settings.prompt_style
        for g in gens:
            items.append({"data_source": p.data_source, "solution_str": g.text, "ground_truth": p.ground_truth,
                          "extra_info": extra})
    t0 = time.monotonic()
    kwargs = {} if ctx.req.score_workers is None else {"workers": ctx.req.score_workers}
    verdicts = score_batch(items, scorer=scorer_for(ctx.preset), **kwargs)
    return verdicts, time.monotonic() - t0


def _problem_id(p) -> Any:
    return p.extra_info.get("id", p.extra_info.get("index", p.index))


def _samples(ctx: EvalContext, prompts, generations, verdicts) -> tuple[list[list], list[str]]:
    """(scored samples per problem, samples.jsonl lines in (problem, sample) order)."""
    from gspo_cli.eval import metrics

    scored: list[list[metrics.ScoredSample]] = []
    lines = []
    it = iter(verdicts)
    for p, prompt, gens in zip(ctx.problems, prompts, generations, strict=True):
        row = []
        for j, g in enumerate(gens):
            v = next(it)
            pred = v.get("pred") or None
            correct = bool(v.get("acc"))
            row.append(metrics.ScoredSample(correct=correct, pred=pred, response_tokens=g.tokens,
                                            truncated=g.truncated))
            lines.append(json.dumps({
                "problem": p.index, "sample": j, "data_source": p.data_source, "id": _problem_id(p),
                "ground_truth": p.ground_truth, "pred": pred, "correct": correct, "score": v.get("score"),
                "score_error": v.get("error"), "response": g.text, "response_tokens": g.tokens,
                "finish_reason": g.finish_reason, "truncated": g.truncated,
                **({"prompt": prompt} if j == 0 else {}),
            }, ensure_ascii=False, default=str))
        scored.append(row)
    return scored, lines


def evaluate_model(jobs: list[tuple[EvalContext, Path]], model_ref, model_dir: Path) -> list[dict[str, Any]]:
    """Every (benchmark, output folder) of `jobs` on one model, through one backend loaded once; a benchmark's
    results are written as soon as it is scored."""
    from transformers import AutoTokenizer

    from gspo_cli.eval.backends import choose_backend, make_backend
    from gspo_cli.eval.request import trusts_remote_code
    from gspo_cli.eval.settings import eval_section

    ctxs = [ctx for ctx, _ in jobs]
    first = ctxs[0]
    backend_name = choose_backend(first.req.backend or eval_section(first.preset).backend, first.device)
    names = [c.req.benchmark for c in ctxs]
    events.message(f"eval {', '.join(names)}: {' + '.join(str(len(c.problems)) for c in ctxs)} problems on "
                   f"{first.device} with {backend_name}, model {model_dir}")
    tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=trusts_remote_code(first.req, first.preset))
    prompts = [_prompts(c, tokenizer) for c in ctxs]
    options = _backend_options(ctxs, model_dir, tokenizer, prompts, backend_name)
    t0 = time.monotonic()
    backend = make_backend(backend_name, str(model_dir), **options)
    load_s = time.monotonic() - t0
    if getattr(backend, "settings", None):
        options["engine"] = backend.settings  # what the engine ran with (vllm: the CPU / accelerator target)
    shared = {"load_s": load_s, "backend": backend_name, "options": options, "benchmarks": names}
    results = []
    try:
        for (ctx, out_dir), ps in zip(jobs, prompts, strict=True):
            started = time.time()
            if len(jobs) > 1:
                events.message(f"benchmark {ctx.req.benchmark}: {len(ctx.problems)} problems x n={ctx.settings.n}")
            generations, gen_s = _generate(ctx, backend, ps)
            results.append(_finish(ctx, model_ref, out_dir, model_dir, ps, generations,
                                   {"load_s": load_s, "generate_s": gen_s}, shared, started))
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    return results


def _finish(ctx: EvalContext, model_ref, out_dir: Path, model_dir: Path, prompts, generations, timing: dict,
            shared: dict, started: float) -> dict[str, Any]:
    """Score one benchmark's generations, summarize them and write its results folder."""
    from gspo_cli.eval import metrics

    req, preset, settings, options = ctx.req, ctx.preset, ctx.settings, shared["options"]
    verdicts, timing["score_s"] = _score(ctx, generations)
    scored, lines = _samples(ctx, prompts, generations, verdicts)
    summary = metrics.summarize(scored, settings.k)
    for p, row in zip(ctx.problems, summary["per_problem"], strict=True):
        row.update(problem=p.index, id=_problem_id(p), ground_truth=p.ground_truth)
    total_tokens = sum(g.tokens for gens in generations for g in gens)
    gen_s = timing["generate_s"]
    results = {
        "benchmark": req.benchmark,
        "accuracy": summary["metrics"][f"avg@{settings.n}"],
        "metrics": summary["metrics"],
        "settings": {**settings.to_dict(), "backend": shared["backend"], "device": ctx.device,
                     "tp": options["tp"], "limit": req.limit,
                     **({"engine": options["engine"]} if "engine" in options else {}),
                     "verifier": preset.reward.verifier if preset is not None else "gspo",
                     "preset": preset.name if preset is not None else None, "sets": list(req.sets)},
        "model": {"ref": req.model, "path": str(model_dir), "run": str(model_ref.run) if model_ref.run else None,
                  "run_name": model_ref.run.name if model_ref.run else None, "step": model_ref.step},
        "data": {"path": str(settings.data), "problems": len(ctx.problems), "sha256": settings.data_sha256},
        "timing": {**{k: round(v, 3) for k, v in timing.items()}, "total_s": round(time.time() - started, 3),
                   "response_tokens": total_tokens,
                   "tokens_per_s": round(total_tokens / gen_s, 2) if gen_s > 0 else None,
                   # the benchmarks one loaded engine served (load_s is that one load, counted once per job)
                   "engine_shared_by": shared["benchmarks"]},
        "definitions": metrics.DEFINITIONS,
        "per_problem": summary["per_problem"],
        "files": {"results": str(out_dir / "results.json"), "samples": str(out_dir / "samples.jsonl")},
    }
    write_results(out_dir, results, lines)
    return results


def write_results(out_dir: Path, results: dict[str, Any], lines: list[str]) -> None:
    from gspo_cli import __version__
    from gspo_cli.fsutil import atomic_path, atomic_write_json

    results["gspo_version"] = __version__
    results["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out_dir.mkdir(parents=True, exist_ok=True)
    # a rerun into the same folder: drop the old results first, so a kill between the two writes never leaves
    # old results beside new samples looking finished
    (out_dir / "results.json").unlink(missing_ok=True)
    with atomic_path(out_dir / "samples.jsonl") as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    atomic_write_json(out_dir / "results.json", results)
    events.message(f"wrote {out_dir / 'results.json'}")

"""`gspo eval`: generate n responses per problem, score them with the training reward, write results.

Stages: resolve settings (registry < preset < flags) -> resolve the model (HF folder, run, RUN:STEP, verl
checkpoint exported to HF) -> render prompts with the model's chat template -> generate (vllm or hf backend)
-> score through the reward's batch pool -> metrics -> `samples.jsonl` (every response) and `results.json`
(settings, metrics, per-problem accuracy), written atomically. results.json is written last: its presence
means the eval finished.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gspo_cli import layout
from gspo_cli.errors import ConfigError
from gspo_cli.jobs import events

RESULTS = "results.json"
SAMPLES = "samples.jsonl"


@dataclass
class EvalRequest:
    benchmark: str
    model: str = "latest"
    preset: str | None = None
    sets: list[str] = field(default_factory=list)
    # sampling / data overrides; None = preset or registry default
    n: int | None = None
    k: list[int] | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int | None = None
    prompt_style: str | None = None
    enable_thinking: bool | None = None
    data: str | None = None
    # execution
    backend: str | None = None  # None = preset eval.backend
    device: str | None = None  # None = preset cluster.device
    batch_size: int = 64
    tp: int | None = None  # None = preset rollout.tensor_parallel_size
    limit: int | None = None  # first N problems only (smoke tests)
    seed: int = 0
    out: str | None = None
    score_workers: int | None = None  # None = the batch pool's default; 0 = in-process

    def overrides(self) -> dict[str, Any]:
        return {"n": self.n, "k": self.k, "temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                "max_tokens": self.max_tokens, "prompt_style": self.prompt_style,
                "enable_thinking": self.enable_thinking, "data": self.data}


def load_preset(req: EvalRequest):
    if req.preset is None:
        if req.sets:
            raise ConfigError("--set needs --preset", "name the preset the overrides apply to")
        return None
    from gspo_cli.config.presets import load_preset as _load

    return _load(req.preset, req.sets)


def output_dir(req: EvalRequest, preset=None, model_ref=None) -> Path:
    """runs/<run>/eval/<benchmark>-<step>/ for a run's checkpoint, else $GSPO_HOME/evals/<model>-<benchmark>-<ts>/."""
    if req.out:
        return Path(req.out).expanduser()
    if model_ref is None:
        model_ref = resolve(req, preset)
    if model_ref.run is not None and model_ref.step is not None:
        return model_ref.run / "eval" / f"{req.benchmark}-{model_ref.step}"
    # a folder name safe on every filesystem ("builtin:tiny" -> "builtin-tiny")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", model_ref.path.name or str(model_ref.path)).strip("-") or "model"
    return layout.gspo_home() / "evals" / f"{name}-{req.benchmark}-{time.strftime('%Y%m%d-%H%M%S')}"


def resolve(req: EvalRequest, preset=None):
    from gspo_cli.layout import ModelRef, resolve_model

    if req.model.startswith("builtin:"):
        return ModelRef(Path(req.model), None, None)
    return resolve_model(req.model, preset)


def hf_folder(model_ref) -> Path:
    """An HF folder for the model: as is, the built-in tiny model, or a verl checkpoint exported first."""
    path = model_ref.path
    if str(path) == "builtin:tiny":
        from gspo_cli.models.tiny import ensure_tiny_model

        return ensure_tiny_model()
    from gspo_cli.models import verl_checkpoint as verl_export  # light: paths and a subprocess call

    if verl_export.is_verl_checkpoint(path):
        # merged once into <step>/huggingface_merged by verl's model_merger, reused afterwards
        events.message(f"{path} is a verl checkpoint: exporting it to an HF folder")
        return Path(verl_export.ensure_hf(path))
    if not (path / "config.json").is_file():
        raise ConfigError(f"{path} is not an HF model folder (no config.json)",
                          "pass an HF folder, a run (RUN or RUN:STEP) or a verl checkpoint step folder")
    return path


class _Progress:
    """Progress events, at most every `every_s` seconds (plus the last one)."""

    def __init__(self, task: str, every_s: float = 0.5):
        self.task, self.every_s, self.last = task, every_s, 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - self.last >= self.every_s:
            self.last = now
            events.progress(done, total, task=self.task)


def _settings_device(req: EvalRequest, preset) -> str:
    from gspo_cli.models.device import detect_device  # one device probe for train and eval

    requested = req.device or (preset.cluster.device if preset is not None else "auto")
    return detect_device(requested)


def run_eval(req: EvalRequest) -> dict[str, Any]:
    from gspo_cli import __version__
    from gspo_cli.eval import benchmarks, metrics
    from gspo_cli.eval.backends import choose_backend, make_backend
    from gspo_cli.eval.types import Sampling
    from gspo_cli.fsutil import atomic_path, atomic_write_json

    started = time.time()
    preset = load_preset(req)
    settings = benchmarks.resolve_settings(req.benchmark, preset, req.overrides())
    model_ref = resolve(req, preset)
    out_dir = output_dir(req, preset, model_ref)
    model_dir = hf_folder(model_ref)
    problems = benchmarks.load_problems(settings.data, req.limit)

    device = _settings_device(req, preset)
    backend_name = choose_backend(req.backend or (preset.eval.backend if preset is not None else "auto"), device)
    events.message(f"eval {req.benchmark}: {len(problems)} problems x n={settings.n} on {device} with {backend_name}, "
                   f"model {model_dir}")

    from transformers import AutoTokenizer

    trust = bool(preset.model.trust_remote_code) if preset is not None else False
    tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=trust)
    messages = [benchmarks.restyle(p, settings.prompt_style) for p in problems]
    prompts = [benchmarks.render_prompt(tokenizer, m, settings.enable_thinking) for m in messages]

    sampling = Sampling(temperature=settings.temperature, top_p=settings.top_p, top_k=settings.top_k,
                        max_tokens=settings.max_tokens, seed=req.seed)
    options: dict[str, Any] = {"device": device, "batch_size": req.batch_size, "trust_remote_code": trust}
    if preset is not None:
        options["dtype"] = preset.model.dtype if device != "cpu" else "float32"
        options["gpu_memory_utilization"] = preset.rollout.gpu_memory_utilization
        options["tp"] = req.tp or preset.rollout.tensor_parallel_size
        options["address"] = preset.cluster.address
    elif req.tp:
        options["tp"] = req.tp
    if backend_name == "vllm":
        # prompt + response must fit the engine's context
        longest = max(len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts)
        options["max_model_len"] = longest + settings.max_tokens
    t0 = time.monotonic()
    backend = make_backend(backend_name, str(model_dir), **options)
    load_s = time.monotonic() - t0
    t0 = time.monotonic()
    try:
        generations = backend.generate(prompts, sampling, settings.n, _Progress(f"generate {req.benchmark}"))
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    gen_s = time.monotonic() - t0

    from gspo_cli.rewards import score_batch

    events.message(f"scoring {len(problems) * settings.n} responses")
    items = []
    for p, gens in zip(problems, generations, strict=True):
        extra = dict(p.extra_info)
        if settings.prompt_style:
            extra["prompt_style"] = settings.prompt_style
        for g in gens:
            items.append({"data_source": p.data_source, "solution_str": g.text, "ground_truth": p.ground_truth,
                          "extra_info": extra})
    t0 = time.monotonic()
    kwargs = {} if req.score_workers is None else {"workers": req.score_workers}
    verdicts = score_batch(items, **kwargs)
    score_s = time.monotonic() - t0

    # samples.jsonl: one line per response, in (problem, sample) order
    scored: list[list[metrics.ScoredSample]] = []
    lines = []
    it = iter(verdicts)
    for p, prompt, gens in zip(problems, prompts, generations, strict=True):
        row = []
        for j, g in enumerate(gens):
            v = next(it)
            pred = v.get("pred") or None
            correct = bool(v.get("acc"))
            row.append(metrics.ScoredSample(correct=correct, pred=pred, response_tokens=g.tokens,
                                            truncated=g.truncated))
            lines.append(json.dumps({
                "problem": p.index, "sample": j, "data_source": p.data_source,
                "id": p.extra_info.get("id", p.extra_info.get("index", p.index)),
                "ground_truth": p.ground_truth, "pred": pred, "correct": correct, "score": v.get("score"),
                "score_error": v.get("error"), "response": g.text, "response_tokens": g.tokens,
                "finish_reason": g.finish_reason, "truncated": g.truncated,
                **({"prompt": prompt} if j == 0 else {}),
            }, ensure_ascii=False, default=str))
        scored.append(row)
    summary = metrics.summarize(scored, settings.k)
    for p, row in zip(problems, summary["per_problem"], strict=True):
        row["problem"] = p.index
        row["id"] = p.extra_info.get("id", p.extra_info.get("index", p.index))
        row["ground_truth"] = p.ground_truth

    total_tokens = sum(g.tokens for gens in generations for g in gens)
    n = settings.n
    results = {
        "benchmark": req.benchmark,
        "accuracy": summary["metrics"][f"avg@{n}"],
        "metrics": summary["metrics"],
        "settings": {**settings.to_dict(), "seed": req.seed, "backend": backend_name, "device": device,
                     "batch_size": req.batch_size, "tp": options.get("tp", 1), "limit": req.limit,
                     "preset": preset.name if preset is not None else None, "sets": list(req.sets)},
        "model": {"ref": req.model, "path": str(model_dir), "run": str(model_ref.run) if model_ref.run else None,
                  "run_name": model_ref.run.name if model_ref.run else None, "step": model_ref.step},
        "data": {"path": str(settings.data), "problems": len(problems)},
        "timing": {"load_s": round(load_s, 3), "generate_s": round(gen_s, 3), "score_s": round(score_s, 3),
                   "total_s": round(time.time() - started, 3), "response_tokens": total_tokens,
                   "tokens_per_s": round(total_tokens / gen_s, 2) if gen_s > 0 else None},
        "definitions": metrics.DEFINITIONS,
        "per_problem": summary["per_problem"],
        "files": {"results": str(out_dir / RESULTS), "samples": str(out_dir / SAMPLES)},
        "gspo_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    # a rerun into the same folder: drop the old results first, so a kill between the two writes never leaves
    # old results beside new samples looking finished
    (out_dir / RESULTS).unlink(missing_ok=True)
    with atomic_path(out_dir / SAMPLES) as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    atomic_write_json(out_dir / RESULTS, results)
    events.message(f"wrote {out_dir / RESULTS}")
    return results


def read_results(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))

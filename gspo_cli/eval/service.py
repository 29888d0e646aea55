"""`gspo eval`: generate n responses per problem, score them with the training reward, write results.

Stages: resolve settings (the preset's eval.benchmarks.<name>, flags over it) -> resolve the model (HF folder,
run, RUN:STEP, verl checkpoint exported to HF) -> render prompts with the model's chat template -> generate (vllm or hf backend)
-> score through the reward's batch pool -> metrics -> `samples.jsonl` (every response) and `results.json`
(settings, metrics, per-problem accuracy), written atomically. results.json is written last: its presence
means the eval finished.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from gspo_cli import layout
from gspo_cli.errors import ConfigError
from gspo_cli.eval.request import EvalRequest
from gspo_cli.eval.settings import eval_section, resolve_settings
from gspo_cli.jobs import events

RESULTS = "results.json"


def load_preset(req: EvalRequest):
    if req.preset is None:
        if req.sets:
            raise ConfigError("--set needs --preset", "name the preset the overrides apply to")
        return None
    from gspo_cli.config import run_config
    from gspo_cli.config.presets import load_preset as _load

    preset = _load(req.preset, req.sets)
    if run_config.is_run_config(Path(req.preset).expanduser()):
        # a run folder's saved config is data: its env.vars never reach the eval job (trust_remote_code was dropped
        # by the loader; config/run_config.py)
        preset = preset.model_copy(update={"env": preset.env.model_copy(update={"vars": {}})})
    return preset


def settings_digest(wanted: dict[str, Any]) -> str:
    """8 hex characters naming the settings that determine an eval's numbers (`wanted_settings`)."""
    import hashlib

    return hashlib.sha256(json.dumps(wanted, sort_keys=True, default=str).encode()).hexdigest()[:8]


def output_dir(req: EvalRequest, preset=None, model_ref=None) -> Path:
    """runs/<run>/eval/<benchmark>-<step>-<settings digest>/ for a run's checkpoint (other settings: another folder,
    so evals never overwrite each other), else $GSPO_HOME/evals/<model>-<benchmark>-<ts>/."""
    if req.out:
        return Path(req.out).expanduser()
    if model_ref is None:
        model_ref = resolve(req, preset)
    if model_ref.run is not None and model_ref.step is not None:
        digest = settings_digest(wanted_settings(req, preset))
        return _inside_run(model_ref.run / "eval" / f"{req.benchmark}-{model_ref.step}-{digest}", model_ref.run)
    # a folder name safe on every filesystem ("builtin:tiny" -> "builtin-tiny")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", model_ref.path.name or str(model_ref.path)).strip("-") or "model"
    return layout.gspo_home() / "evals" / f"{name}-{req.benchmark}-{req.stamp or time.strftime('%Y%m%d-%H%M%S')}"


def _inside_run(folder: Path, run: Path) -> Path:
    """A run's eval folder, refused when a link takes it (or its eval/) outside the run: a run folder from someone
    else must not make gspo write elsewhere (docs/security.md)."""
    for part in (folder.parent, folder):
        if part.is_symlink() or (part.exists() and not part.resolve().is_relative_to(run.resolve())):
            raise ConfigError(f"{part} is a link out of run {run.name}: gspo writes a run's evals only inside it",
                              "remove the link, or name another folder: --out DIR")
    return folder


def resolve(req: EvalRequest, preset=None):
    """The one model of the request (RUN:all and step lists: see `resolve_all`)."""
    from gspo_cli.runs.refs import resolve_model

    return resolve_model(req.model, preset)


def resolve_all(req: EvalRequest, preset=None) -> list:
    """Every checkpoint the request names: one, or several for RUN:all / RUN:20,40,60."""
    from gspo_cli.runs.refs import resolve_models

    refs = resolve_models(req.model, preset)
    if len(refs) > 1 and req.out:
        raise ConfigError(f"--out names one folder but --model {req.model!r} names {len(refs)} checkpoints",
                          "drop --out: each step is written to runs/<run>/eval/<benchmark>-<step>/")
    return refs


def hf_folder(model_ref) -> Path:
    """An HF folder for the model: as is, the built-in tiny model, or a verl checkpoint exported first."""
    path = model_ref.path
    if getattr(model_ref, "kind", "hf") == "builtin":
        from gspo_cli.models.loading import resolve_model_path

        return Path(resolve_model_path(str(path)))
    if getattr(model_ref, "kind", "hf") == "hub":
        return path  # a hub id: transformers downloads it (or finds it in its cache)
    from gspo_cli.models import verl_checkpoint as verl_export  # light: paths and a subprocess call

    if verl_export.is_verl_checkpoint(path):
        # merged once into <step>/huggingface_merged by verl's model_merger, reused afterwards; one line says
        # which, the merger's own output stays in its merge.log
        return Path(verl_export.ensure_hf(path, say=events.message))
    if not (path / "config.json").is_file():
        raise ConfigError(f"{path} is not an HF model folder (no config.json)",
                          "pass an HF folder, a run (RUN or RUN:STEP) or a verl checkpoint step folder")
    return path


def choose_device(req: EvalRequest, preset) -> str:
    """--device, else the preset's `eval.device` (default auto: the accelerator when one is present).

    Not `cluster.device` / `trainer.device`: a preset that trains on cpu (tiny) still evaluates on a GPU host's GPU.
    """
    from gspo_cli.models.device import detect_device  # one device probe for train and eval

    requested = req.device or eval_section(preset).device
    return detect_device(requested)


def same_settings(results: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether finished results were produced with these sampling/data settings (device and backend aside).
    A result of a gspo that recorded no data digest is never the same: its data cannot be told."""
    return not differences(results, wanted)


def differences(results: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """`KEY: THERE -> HERE` for each setting (data digest included) in which a finished result differs."""
    have = results.get("settings") or {}
    out = []
    for key, value in wanted.items():
        if have.get(key) != value:
            there, here = have.get(key), value
            if key == "data_sha256":
                there = f"{there[:12]} ({(results.get('data') or {}).get('problems')} problems)" if there else \
                    f"not recorded ({(results.get('data') or {}).get('problems')} problems)"
                here = here[:12]
            out.append(f"{key}: {there} there, {here} now")
    return out


def check_replace(folder: Path, wanted: dict[str, Any]) -> None:
    """Refuse to write an eval into a folder that holds the finished result of other settings or data: a result
    is replaced only by one of the same settings on the same data (`--force`), never by another's."""
    path = folder / RESULTS
    if not path.is_file():
        return
    try:
        diff = differences(read_results(path), wanted)
    except (OSError, ValueError):
        return  # unreadable: no result to keep
    if diff:
        raise ConfigError(f"{folder} holds an eval of other settings or data ({'; '.join(diff)}); it is kept",
                          "drop --out (each settings and data digest gets its own folder) or name another folder")


def wanted_settings(req: EvalRequest, preset=None) -> dict[str, Any]:
    """The settings that make two evals of one checkpoint comparable (what `--force` would redo)."""
    return {**resolve_settings(req.benchmark, preset, req.flags()).to_dict(), "limit": req.limit}


def run_evals(req: EvalRequest) -> list[dict[str, Any]]:
    """Evaluate every checkpoint the request names on each of its benchmarks, in this process: each benchmark's data
    is read once, and each checkpoint is loaded once (one engine) for all its benchmarks. A (benchmark, checkpoint)
    already evaluated with the same settings is skipped unless the request says `force`."""
    from gspo_cli.eval.runner import evaluate_model

    preset = load_preset(req)
    refs = resolve_all(req, preset)
    device = choose_device(req, preset)
    ctxs = [_context(req.one(name), preset, device) for name in req.names()]
    results = []
    for i, ref in enumerate(refs):
        if len(refs) > 1:
            events.message(f"checkpoint {i + 1}/{len(refs)}: step {ref.step}")
        jobs = []
        for ctx in ctxs:
            done = None if req.force else evaluated_dir(ctx.req, preset, ref)
            if done is not None:
                events.message(f"{ctx.req.benchmark}: already evaluated with these settings: {done}")
                continue
            folder = output_dir(ctx.req, preset, ref)
            check_replace(folder, wanted_settings(ctx.req, preset))
            jobs.append((ctx, folder))
        if jobs:
            results.extend(evaluate_model(jobs, ref, hf_folder(ref)))
    return results


def _context(req: EvalRequest, preset, device: str):
    """One benchmark's settings and problems (read once for every checkpoint)."""
    from gspo_cli.data.manifest import is_legacy
    from gspo_cli.eval import benchmarks
    from gspo_cli.eval.runner import EvalContext

    settings = resolve_settings(req.benchmark, preset, req.flags())
    if is_legacy(settings.data.parent):
        events.message(f"data: {settings.data} (a set prepared before keyed folders; its manifest matches the "
                       "preset's settings)")
    problems = benchmarks.load_problems(settings.data, req.limit)
    if preset is not None and _scores_with_verls_default(preset):
        _verl_scores(req.benchmark, {p.data_source for p in problems})
    return EvalContext(req=req, preset=preset, settings=settings, problems=problems, device=device)


def _scores_with_verls_default(preset: Any) -> bool:
    """The preset's `reward.verifier` is verl's default_compute_score (its backend names no custom function)."""
    from gspo_cli.rewards.backends import REWARD_BACKENDS

    return REWARD_BACKENDS.lookup(preset.reward.verifier).verl_reward is None


def _verl_scores(benchmark: str, data_sources: set[str]) -> None:
    """verl's default_compute_score knows some data sources only (amc2023 is not one): asked once per source, so an
    eval with `reward.verifier: verl` is refused in one line instead of scoring every response as an error."""
    from gspo_cli.rewards.choice import verl_compute_score

    for source in sorted(data_sources):
        try:
            verl_compute_score(source, "Answer: 1", "1")
        except NotImplementedError:
            raise ConfigError(f"{benchmark}: reward.verifier verl: verl's default_compute_score has no scorer for "
                              f"data source {source!r}", "evaluate it with gspo's verifier: --set "
                              "reward.verifier=gspo") from None


def read_results(path: str | Path) -> dict[str, Any]:
    from gspo_cli import untrusted

    data = untrusted.read_json(path)  # size and depth limits (BadFile is a ValueError)
    if not isinstance(data, dict):
        raise untrusted.BadFile(f"{path}: not a JSON object")
    return data


def evaluated_dir(req: EvalRequest, preset, ref) -> Path | None:
    """The folder of a finished eval of `ref` with the request's settings: its digest folder, or a folder of an
    older gspo (`<benchmark>-<step>`, no digest) whose results.json has the same settings; None when there is none."""
    wanted = wanted_settings(req, preset)
    folder = output_dir(req, preset, ref)
    candidates = [folder]
    if not req.out and ref.run is not None and ref.step is not None:
        candidates.append(ref.run / "eval" / f"{req.benchmark}-{ref.step}")
    for candidate in candidates:
        path = candidate / RESULTS
        if path.is_file() and same_settings(read_results(path), wanted):
            return candidate
    return None


def split_evaluated(req: EvalRequest, preset, refs: list, *, force: bool = False) -> tuple[list[int], list[int]]:
    """(steps to evaluate, steps already evaluated with the same settings) of a RUN:all / step-list request;
    `force` evaluates every step again."""
    todo, done = [], []
    for ref in refs:
        if not force and evaluated_dir(req, preset, ref) is not None:
            done.append(ref.step)
        else:
            todo.append(ref.step)
    return todo, done


def pending(req: EvalRequest, preset, refs: list, *, force: bool = False) -> list[tuple[EvalRequest, Any]]:
    """(benchmark request, checkpoint) pairs of a several-benchmark request not yet evaluated with these settings
    (every pair with `force`); a folder holding another result is refused here, before any job."""
    todo = []
    for name in req.names():
        one = req.one(name)
        for ref in refs:
            if force or evaluated_dir(one, preset, ref) is None:
                check_replace(output_dir(one, preset, ref), wanted_settings(one, preset))
                todo.append((one, ref))
    return todo


def results_of(req: EvalRequest, preset, refs: list) -> list[dict[str, Any]]:
    """The results.json of each checkpoint, in `refs` order."""
    return [read_results((evaluated_dir(req, preset, ref) or output_dir(req, preset, ref)) / RESULTS) for ref in refs]


def run_preset(refs: list) -> Path | None:
    """The resolved preset of the run the checkpoints belong to (runs/<run>/config.yaml): eval's default preset."""
    runs = {ref.run for ref in refs if getattr(ref, "run", None) is not None}
    if len(runs) != 1:
        return None
    config = next(iter(runs)) / "config.yaml"
    return config.resolve() if config.is_file() else None

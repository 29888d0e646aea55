"""What `gspo eval` does between its options and its output: fail fast on a bad preset, flag or model (before any
job); a run's checkpoints with the run's own preset; then one job for what is not yet evaluated with these settings,
and the results to print (eval/view.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gspo_cli.console import err
from gspo_cli.eval import request, service, settings
from gspo_cli.eval.request import EvalRequest

ONE, STEPS, MANY = "one", "steps", "many"  # one model; several checkpoints of a run; several benchmarks


@dataclass
class Evaluated:
    """What `gspo eval` prints: results.json of each (benchmark, checkpoint) asked for, or the job's failure."""

    kind: str  # ONE (`results` is one results.json), STEPS or MANY (a list of them)
    results: Any
    run: str | None  # the run whose checkpoints these are (the chart hint), else None
    exit_code: int = 0  # the eval job's, when it failed (then no results)


def prepare(req: EvalRequest) -> tuple[Any, list]:
    """The loaded preset and the model references, or the one-line error of a bad preset, --set, flag or --model."""
    loaded = _check_settings(req)
    refs = service.resolve_all(req, loaded)  # and on a --model that names nothing loadable
    if req.preset is None and (config := service.run_preset(refs)) is not None:
        req.preset = str(config)  # a run's checkpoints are evaluated with the run's own resolved preset
        loaded = _check_settings(req)
        err.print(f"Preset: the run's own ({config}); --preset NAME to use another", highlight=False)
    _say_trust(req, loaded)
    _check_hub_model(refs)
    return loaded, refs


def _check_settings(req: EvalRequest) -> Any:
    loaded = service.load_preset(req)  # fail fast here on a bad preset or --set, before a job is submitted
    for name in req.names():
        settings.benchmark_settings(name, loaded, req.flags())  # and on a bad flag
    return loaded


def _say_trust(req: EvalRequest, loaded: Any) -> None:
    """The visible line of trust_remote_code on: where it came from (the user's flag or own preset)."""
    if request.trusts_remote_code(req, loaded):
        where = "--trust-remote-code" if req.trust_remote_code else f"preset {loaded.name}: model.trust_remote_code"
        err.print(f"trust_remote_code: on ({where}): the model folder's own Python code (auto_map) runs",
                  highlight=False, markup=False)


def _check_hub_model(refs: list) -> None:
    """A hub id that is neither cached nor reachable fails here, in seconds, not after a minute inside the job."""
    for ref in refs:
        if getattr(ref, "kind", "") == "hub":
            from gspo_cli.models.reachable import require_hub_id

            require_hub_id(str(ref.path))


def evaluate(req: EvalRequest, loaded: Any, refs: list, *, address: str | None, local: bool,
             node: Callable[[Any], Any]) -> Evaluated:
    """One model, several checkpoints of a run, or several benchmarks: each in one job. `node`: what a node must
    offer the preset's engine (the CLI hands in engines.node_resources: eval/ imports no training engine)."""
    job = _Job(loaded, address, local, node)
    if len(req.names()) > 1:
        return _many(req, loaded, refs, job)
    if len(refs) > 1:
        return _steps(req, loaded, refs, job)
    return _one(req, loaded, refs[0], job)


@dataclass
class _Job:
    """The one eval job of a command: the preset's job environment and node resources, submitted or run here."""

    loaded: Any
    address: str | None
    local: bool
    node: Callable[[Any], Any]

    def run(self, payload: Any, run: str | None) -> int:
        from gspo_cli.env.exports import job_vars
        from gspo_cli.jobs import client as jobs

        spec = jobs.JobSpec("eval", payload, preset=self.loaded, run=run, env_vars=job_vars(self.loaded),
                            node=self.node(self.loaded))
        return jobs.run_job(spec, address=self.address, local=self.local)


def _one(req: EvalRequest, loaded: Any, ref: Any, job: _Job) -> Evaluated:
    """One model: its request file beside the results, one job. A checkpoint already evaluated with these settings
    is shown, not redone (unless --force)."""
    done = None if req.force else service.evaluated_dir(req, loaded, ref)
    run = ref.run.name if getattr(ref, "run", None) is not None else None
    if done is not None:
        err.print(f"Already evaluated with these settings (--force redoes it): {done}", highlight=False)
        out_dir = done
    else:  # a folder holding another result (--out) is refused here, before any job
        service.check_replace(service.output_dir(req, loaded, ref), service.wanted_settings(req, loaded))
        out_dir = service.output_dir(req, loaded, ref)
        req.out = str(out_dir)
        # --json prints results.json from disk (shared $GSPO_HOME), not the job's trimmed result event
        code = job.run(request.write_request(req, out_dir / request.REQUEST_FILE), run)
        if code != 0:
            return Evaluated(ONE, None, run, code)
    return Evaluated(ONE, service.read_results(out_dir / service.RESULTS), run)


def _steps(req: EvalRequest, loaded: Any, refs: list, job: _Job) -> Evaluated:
    """RUN:all / RUN:20,40: one job for the checkpoints not yet evaluated with these settings."""
    todo, done = service.split_evaluated(req, loaded, refs, force=req.force)
    run = refs[0].run
    if done:
        err.print(f"Already evaluated with these settings (--force redoes them): steps {_steps_text(done)}",
                  highlight=False)
    if todo:
        req.model = f"{run.resolve()}:{','.join(map(str, todo))}"
        err.print(f"Evaluating {req.benchmark} on {len(todo)} checkpoints of {run.name} in one job: steps "
                  f"{_steps_text(todo)}", highlight=False)
        code = job.run(request.payload(req), run.name)
        if code != 0:
            return Evaluated(STEPS, None, run.name, code)
    return Evaluated(STEPS, service.results_of(req, loaded, refs), run.name)


def _steps_text(steps: list[int]) -> str:
    return ", ".join(map(str, steps))


def _many(req: EvalRequest, loaded: Any, refs: list, job: _Job) -> Evaluated:
    """Several benchmarks (aime2024,aime2025,amc2023): one job for the (benchmark, checkpoint) pairs not yet
    evaluated with these settings, each checkpoint loaded once (one vLLM engine or one HF model) for all of them;
    the results by benchmark, then step."""
    todo = service.pending(req, loaded, refs, force=req.force)
    done = len(req.names()) * len(refs) - len(todo)
    if done:
        err.print(f"Already evaluated with these settings (--force redoes them): {done} of "
                  f"{len(req.names()) * len(refs)} benchmark x checkpoint pairs", highlight=False)
    run = refs[0].run if getattr(refs[0], "run", None) is not None else None
    name = run.name if run is not None else None
    if todo:
        steps = list(dict.fromkeys(ref.step for _, ref in todo))
        if run is not None and None not in steps:
            req.model = f"{run.resolve()}:{','.join(map(str, steps))}"  # only the checkpoints with work left
        req.stamp = req.stamp or time.strftime("%Y%m%d-%H%M%S")  # the folders of a model that is not a run's
        benches = list(dict.fromkeys(one.benchmark for one, _ in todo))
        where = f"{len(steps)} checkpoint(s) of {name}" if run is not None else str(refs[0].path)
        err.print(f"Evaluating {', '.join(benches)} on {where} in one job, each checkpoint loaded once for all of "
                  "them", highlight=False)
        code = job.run(request.payload(req), name)
        if code != 0:
            return Evaluated(MANY, None, name, code)
    return Evaluated(MANY, [r for b in req.names() for r in service.results_of(req.one(b), loaded, refs)], name)

"""`gspo train` for the verl engine: plan (compile + preflight + schema check), dry-run rendering, launch, resume.

The Ray job this submits is `python -u -m gspo_cli.job_kinds verl-train <run>/verl_job.json`; its side (verl's
main_ppo under the job wrapper: progress, health rules, restarts) is gspo_cli/engines/verl/job.py. The dry-run
table is gspo_cli/engines/verl/dryrun.py.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.config import trackers
from gspo_cli.engines.verl.job import SPEC_FILE
from gspo_cli.errors import ConfigError
from gspo_cli.runs import lock as run_lock

if TYPE_CHECKING:
    from gspo_cli.config.devices import Resolved
    from gspo_cli.config.presets import LoadedPreset
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import TrainRequest
    from gspo_cli.engines.spec import Environment, Missing
    from gspo_cli.engines.verl.compile import Compiled
    from gspo_cli.engines.verl.schema_check import SchemaResult
    from gspo_cli.jobs.capacity import Need
    from gspo_cli.jobs.jobspec import JobSpec
    from gspo_cli.jobs.target import ClusterTarget
    from gspo_cli.sizing.report import Report

JOB_COMMAND = "verl-train"


@dataclass
class Plan:
    loaded: LoadedPreset
    run_name: str
    run_dir: Path
    compiled: Compiled
    report: Report
    entrypoint: str
    sets: list[str] = field(default_factory=list)
    resume_from: Path | None = None
    schema: SchemaResult | None = None
    schema_error: ConfigError | None = None
    timings: dict[str, float] = field(default_factory=dict)
    # `cluster.device` as resolved on this host, once (an `auto` preset gets verl's choice, config/devices.py);
    # recorded in the job file with what the job needs of the cluster
    device: Resolved | None = None
    need: Need | None = None
    # what the job needs of the interpreter it runs with and what that lacks (the engine spec's environment; None:
    # not asked): a blocking gap makes the plan not launchable, the dry-run says it with the fix
    environment: Environment | None = None

    @property
    def missing(self) -> list[Missing]:
        return list(self.environment.missing) if self.environment is not None else []

    @cached_property
    def preset(self) -> Preset:
        """The preset as the job runs it: `cluster.device` resolved (`loaded.preset` keeps what the file said)."""
        return on_device(self.loaded.preset, self.device.name) if self.device is not None else self.loaded.preset

    @property
    def ok(self) -> bool:
        return self.report.ok and self.schema_error is None and not (self.environment and self.environment.blocks)

    @property
    def total_steps(self) -> int | None:
        return self.report.estimates.get("total_steps")

    def shown_sets(self) -> list[str]:
        """The --set items as gspo prints and saves them: secret values redacted."""
        from gspo_cli.private import redact_set

        return [redact_set(s, self.preset.env.secrets) for s in self.sets]

    def to_json(self, *, redact_env: bool = True) -> dict[str, Any]:
        from gspo_cli.engines.verl.compile import redact

        env = redact(self.compiled.env_vars, list(self.preset.env.secrets)) if redact_env else dict(self.compiled.env_vars)
        return {
            "ok": self.ok,
            "preset": self.preset.name,
            "run": self.run_name,
            "run_dir": str(self.run_dir),
            "resume_from": str(self.resume_from) if self.resume_from else None,
            "sets": self.shown_sets(),  # secret values redacted (gspo_cli/private.py)
            "preflight": self.report.to_json(),
            "schema_check": None if self.schema is None else {
                "ok": self.schema_error is None, "verl_version": self.schema.verl_version,
                "compose_s": round(self.schema.compose_s, 3), "validate_s": round(self.schema.validate_s, 3),
                "validated": self.schema.validated, "cached": self.schema.cached,
            },
            "schema_error": None if self.schema_error is None else {
                "message": self.schema_error.message, "hint": self.schema_error.hint,
            },
            "overrides": list(self.compiled.overrides),
            "origins": dict(self.compiled.origins),
            "runtime_env": {"env_vars": env},
            "entrypoint": self.entrypoint,
            "verl_command": self.compiled.verl_command(self.entrypoint.split(" ", 1)[0]),
            "notes": list(self.compiled.notes),
            "upstream": self.preset.upstream.model_dump(mode="json"),
            "device": self.device.to_json() if self.device is not None else None,
            "cluster_need": self.need.to_json() if self.need is not None else None,
            "missing_here": [m.to_json() for m in self.missing],
            "environment": self.environment.to_json() if self.environment is not None else None,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
        }


def on_device(preset: Preset, device: str) -> Preset:
    """`preset` with `cluster.device` set to `device` (a resolved `auto`)."""
    if preset.cluster.device == device:
        return preset
    return preset.model_copy(update={"cluster": preset.cluster.model_copy(update={"device": device})})


def _resolve_resume(run: str, preset: Preset | None = None) -> tuple[Path, Path, int]:
    """(run_dir, global_step folder to resume from, step) of an existing run (a name, or a run folder inside runs/):
    the newest checkpoint whose step was logged (engines/verl/resume_point.py)."""
    from gspo_cli import layout
    from gspo_cli.console import err
    from gspo_cli.engines.verl.resume_point import resume_point
    from gspo_cli.runs.names import existing_run

    try:
        run_dir = existing_run(run, preset)
    except ConfigError as exc:
        raise ConfigError(f"--resume: {exc.message}", exc.hint) from None
    point = resume_point(run_dir)
    if point.step is None:
        raise ConfigError(f"--resume {run!r}: {layout.checkpoints_dir(run_dir)} has no complete global_step_N "
                          "checkpoint", "the run saved none yet (trainer.save_freq); start it again without --resume")
    if point.note():
        err.print(f"[dim]{point.note()}[/]", highlight=False)
    return run_dir, layout.checkpoints_dir(run_dir) / f"global_step_{point.step}", point.step


def _load_run(preset_name: str | None, sets: list[str], run_name: str | None, resume: str | None):
    """(loaded preset, run name, run folder, checkpoint to resume from or None) of a new or resumed run."""
    from gspo_cli import layout
    from gspo_cli.config import presets
    from gspo_cli.runs.names import run_dir_for

    if resume:
        run_dir, checkpoint, _ = _resolve_resume(resume)
        saved = run_dir / "config.yaml"
        if not saved.is_file():
            raise ConfigError(f"--resume: {saved} is missing", "the run folder is incomplete; start a new run")
        _check_checkpoint(checkpoint)
        return presets.load(str(saved), sets), run_dir.name, run_dir, checkpoint
    if not preset_name:
        raise ConfigError("no preset given", "pass --preset NAME (see `gspo presets list`) or --resume RUN")
    loaded = presets.load(preset_name, sets)
    # the same rule as the native engine, except the default: a new timestamped run each time
    run_name = run_name or loaded.preset.trainer.experiment_name or layout.new_run_name(loaded.preset.name)
    run_dir = run_dir_for(run_name, loaded.preset)  # the one run-name rule (runs/names.py), as the native engine
    resume_from: Path | None = None
    if layout.list_steps(run_dir) and loaded.preset.trainer.resume_mode != "disable":
        # An existing run with checkpoints (`--run-name` of a run): continue it explicitly, as --resume does.
        _, resume_from, _ = _resolve_resume(str(run_dir), loaded.preset)
        _check_checkpoint(resume_from)
    return loaded, run_name, run_dir, resume_from


def _check_checkpoint(step_dir: Path) -> None:
    """The checkpoint verl will resume from loads weights-only (verl itself unpickles it in full): a planted
    pickle is refused in the CLI, before a job exists; the job checks again before verl starts."""
    from gspo_cli.models.safe_load import check_checkpoint

    try:
        check_checkpoint(step_dir)
    except ConfigError as exc:
        raise ConfigError(f"--resume: {exc.message}", exc.hint) from None


def make_plan(
    preset_name: str | None,
    sets: list[str] | None = None,
    *,
    run_name: str | None = None,
    resume: str | None = None,
    schema: bool = True,
    python: str = "python3",
    env_python: str | None = "",
    env: Environment | None = None,
    runs_here: bool = False,
) -> Plan:
    """Everything `gspo train` decides before launch. Never calls Ray. `env_python`: the interpreter the job runs
    with, whose environment is probed ("": this one; None: a named cluster's, not probed), unless `env` is given;
    `runs_here`: the job runs in this process (--local), so what it lacks blocks."""
    from gspo_cli.data import hub_check
    from gspo_cli.data import manifest as prepared
    from gspo_cli.engines.verl import cluster, environment, preflight
    from gspo_cli.engines.verl.compile import compile_preset
    from gspo_cli.jobs.client import entrypoint
    from gspo_cli.models.loading import model_folder

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    sets = list(sets or [])
    loaded, run_name, run_dir, resume_from = _load_run(preset_name, sets, run_name, resume)
    if loaded.preset.trainer.engine != "verl":
        raise ConfigError(f"preset {loaded.preset.name} uses trainer.engine={loaded.preset.trainer.engine}, not verl",
                          "this path compiles verl jobs; the native engine runs through `gspo train` directly")
    device = cluster.device(loaded.preset)  # `auto` resolved once, here: the job file records it
    preset = on_device(loaded.preset, device.name)
    timings["load"] = time.perf_counter() - t0

    t = time.perf_counter()
    report = preflight.run(preset)
    report.checks.append(trackers.check(preset, run_dir, os.environ, []))  # packages: the environment probe's
    report.checks += hub_check.checks(preset, ref=preset_name)  # where model and data come from (data/hub_check.py)
    timings["preflight"] = time.perf_counter() - t

    compiled = compile_preset(
        preset, run_dir=run_dir, train_file=prepared.train_file(preset), val_file=prepared.val_file(preset),
        resume_from=resume_from, experiment_name=preset.trainer.experiment_name or run_name,
        model_path=model_folder(preset),  # a built-in model's or a pinned hub model's folder (models/loading.py)
    )
    spec = run_dir / SPEC_FILE
    plan = Plan(loaded=loaded, run_name=run_name, run_dir=run_dir, compiled=compiled, report=report,
                entrypoint=entrypoint(JOB_COMMAND, [str(spec)], python), sets=sets, resume_from=resume_from,
                timings=timings, device=device, need=cluster.cluster_need(preset),
                environment=env if env is not None else environment.probe(preset, env_python, runs_here=runs_here))
    if schema:
        _check_schema(plan)
    timings["total"] = time.perf_counter() - t0
    return plan


def _check_schema(plan: Plan) -> None:
    """verl's verdict on the compiled config (schema_check) on the plan, or the error that will stop the launch."""
    from gspo_cli.engines.verl import schema_check

    t = time.perf_counter()
    try:
        plan.schema = schema_check.check(plan.compiled, plan.loaded)
    except ConfigError as exc:
        plan.schema_error = exc
        plan.schema = schema_check.SchemaResult(schema_check.verl_version(), time.perf_counter() - t)
    plan.timings["schema_check"] = time.perf_counter() - t


def raise_if_missing(env: Environment | None) -> None:
    """The job's interpreter lacks what the preset's engine needs: one line, and the command that gets it."""
    if env is not None and env.blocks:
        raise ConfigError(f"this preset {env.short()}", env.fix)


def raise_if_blocked(plan: Plan) -> None:
    raise_if_missing(plan.environment)
    if plan.schema_error is not None:
        raise plan.schema_error
    if plan.report.errors:
        first = plan.report.errors[0]
        more = f" (and {n - 1} more; see `gspo train --dry-run`)" if (n := len(plan.report.errors)) > 1 else ""
        raise ConfigError(f"preflight: {first.name}: {first.message}{more}", first.fix or "fix the preset")


# ---------------------------------------------------------------- launch
def write_run(plan: Plan) -> Path:
    """Create the run folder: the resolved preset (unless resuming) and the job spec."""
    import yaml

    from gspo_cli.config.schema import to_jsonable
    from gspo_cli.engines.verl.compile import METRICS_ENV
    from gspo_cli.fsutil import atomic_write_json, atomic_write_text
    from gspo_cli.jobs import secret_env

    plan.run_dir.mkdir(parents=True, exist_ok=True)
    config = plan.run_dir / "config.yaml"
    # the preset as given (`cluster.device: auto` stays auto: a resume resolves it again on its host); the job file
    # records what this job was compiled for
    saved = secret_env.redact_preset(to_jsonable(plan.loaded.preset))  # run folders never hold secret values
    if plan.resume_from is None or not config.exists() or plan.sets:
        atomic_write_text(config, yaml.safe_dump(saved, sort_keys=False))
    spec = plan.run_dir / SPEC_FILE
    public, _ = secret_env.split(plan.compiled.env_vars, secret_env.marked_names(plan.preset))
    atomic_write_json(spec, {  # the job gets the secrets from its secrets file (GSPO_SECRETS_FILE), not here
        "overrides": plan.compiled.overrides,
        "env_vars": public,
        "metrics_file": plan.compiled.env_vars.get(METRICS_ENV),
        "total_steps": plan.total_steps,
        "resume_from": str(plan.resume_from) if plan.resume_from else None,
        # the device the job was compiled for and what it needs of the cluster: the wrapper's capacity check
        "device": plan.device.to_json() if plan.device is not None else None,
        "need": plan.need.to_json() if plan.need is not None else None,
    })
    return spec


def job_spec(plan: Plan, *, verbose: bool = False) -> JobSpec:
    """The Ray job of a plan: the wrapper `verl-train <run>/verl_job.json` serving `gspo train`, with the compiled
    env (the preset's fitted exports + verl's own; an online tracker's key from this shell, a secret: a 0600 file,
    never the job file or the dry-run), what the embedded head must offer it, and the run's lock (runs/lock.py).
    gspo's lines on the terminal (steps, health, summary); verl's and vLLM's output in the job log unless `verbose`."""
    from gspo_cli.console import err
    from gspo_cli.engines.verl.cluster import node_resources
    from gspo_cli.jobs.jobspec import JobSpec

    def write(target: ClusterTarget | None, job_id: str) -> None:
        write_run(plan)
        err.print(f"Run folder: {plan.run_dir}", highlight=False)

    return JobSpec(JOB_COMMAND, [str(plan.run_dir / SPEC_FILE)], preset=plan.preset, run=plan.run_name,
                   env_vars={**plan.compiled.env_vars, **trackers.keys(plan.preset, os.environ)},
                   node=node_resources(plan.preset),
                   claim=run_lock.LockClaim(plan.run_dir, "verl", on_taken=write), serves="train", label="verl job",
                   metadata={"engine": "verl"}, held_output=None if verbose else "verl's and vLLM's own output; --verbose streams it here",
                   step_lines=True)


def launch(plan: Plan, *, address: str | None = None, follow: bool = True, json_out: bool = False,
           local: bool = False, verbose: bool = False) -> int:
    """Preflight and schema check must have passed (`raise_if_blocked`); then run the job: submit and follow the
    Ray job, or in this process with `local` (verl then starts its own local Ray: main_ppo's ray.init). A followed
    run ends with the run's summary (runs/summary.py)."""
    from gspo_cli.jobs import client as jobs

    raise_if_blocked(plan)
    started = time.monotonic()
    code = jobs.run_job(job_spec(plan, verbose=verbose), address=address, local=local, follow=follow,
                        json_out=json_out)
    if (follow or local) and code != 130 and plan.run_dir.is_dir():  # 130: detached with Ctrl-C, still running
        print_summary(plan.run_dir, time.monotonic() - started, failed=code != 0)
    return code


def print_summary(run_dir: Path, wall_s: float, *, failed: bool = False) -> None:
    """The run's summary on stderr (stdout holds only --json's result); after a failure only when the run has
    steps (then it says where it got to and how to resume; a job that failed before its first step ends with
    the failure's lines and where its full log is)."""
    from gspo_cli.console import err
    from gspo_cli.runs.summary import run_summary, summary_lines

    summary = run_summary(run_dir, wall_s=wall_s)
    if failed and not summary["steps_done"]:
        return
    err.print("\n".join(summary_lines(summary)), markup=False, highlight=False)


# ---------------------------------------------------------------- `gspo train` entry (engine registry)
def saved_config(run: str) -> Path:
    """The resolved preset a run was started with (`--resume RUN` reloads it)."""
    run_dir, _, _ = _resolve_resume(run)
    return run_dir / "config.yaml"


def _named_cluster(preset: Preset, address: str | None) -> bool:
    """The job goes to a cluster named by --address, cluster.address or RAY_ADDRESS (its nodes' Python runs it)."""
    return bool(address or preset.cluster.address or os.environ.get("RAY_ADDRESS"))


def _entry_python(preset: Preset, address: str | None) -> str:
    """The interpreter the job will use, without contacting Ray: a named cluster runs `cluster.python`."""
    return preset.cluster.python if _named_cluster(preset, address) else sys.executable


def launch_request(req: TrainRequest) -> int:
    """`gspo train` for presets with trainer.engine=verl (see gspo_cli.engines.TrainRequest)."""
    from gspo_cli.config import trust
    from gspo_cli.console import err, print_json
    from gspo_cli.engines.verl import environment

    preset_ref = None if req.resume else req.preset_ref
    # the environment first: what the job's interpreter lacks stops `gspo train` before anything else is done
    # (issue #33: from .venv a tiny-verl job failed after 36 s of verl start-up on trl); the dry-run reports it
    env_python = sys.executable if req.local or not _named_cluster(req.preset, req.address) else None
    env = None
    if not req.dry_run:
        env = environment.probe(req.preset, env_python, runs_here=req.local)
        raise_if_missing(env)
    plan = make_plan(preset_ref, req.sets, run_name=req.run_name, resume=req.resume,
                     python=_entry_python(req.preset, req.address), env_python=env_python, env=env,
                     runs_here=req.local)
    if req.dry_run:
        if req.json_out:
            print_json({**plan.to_json(), "trust_remote_code": trust.field(req.trust_remote_code)})
        else:
            from gspo_cli.engines.verl.dryrun import render

            render(plan, req.plan_line(plan.preset, plan.report) if req.plan_line else None, verbose=req.verbose)
        return 0 if plan.ok else 2
    for w in plan.report.warnings:
        err.print(f"[yellow]warning:[/] {w.name}: {w.message}", highlight=False)
    if plan.resume_from is not None:
        err.print(f"Resuming {plan.run_name} from {plan.resume_from}"
                  + (f" with --set {' '.join(plan.shown_sets())}" if plan.sets else " with its saved config"))
    return launch(plan, address=req.address, follow=req.follow, json_out=req.json_out, local=req.local,
                  verbose=req.verbose)

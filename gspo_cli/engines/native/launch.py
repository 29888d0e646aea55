"""`gspo train` for the native engine: create the run folder, write the resolved preset, run the `train` job.

Light on purpose (no torch): it runs in the CLI process. The job side is `gspo_cli.engines.native.job`.
The run name is `--run-name`, else `trainer.experiment_name`, else the preset name, so running the same
command again resumes the same run (`trainer.resume_mode: auto`), as verl does with its experiment folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli.config import trackers
from gspo_cli.engines.native.inputs import check_inputs, run_name_for, run_path
from gspo_cli.errors import ConfigError
from gspo_cli.runs import lock as run_lock
from gspo_cli.runs.names import run_dir_for

if TYPE_CHECKING:
    from gspo_cli.engines.request import TrainRequest

JOB_COMMAND = "train"


def prepare_run(req: TrainRequest) -> Path:
    """The run folder with config.yaml (readable) and config.json (what the job loads)."""
    check_inputs(req)
    run_dir = run_path(req)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config(req, run_dir)
    return run_dir


def write_config(req: TrainRequest, run_dir: Path) -> None:
    import yaml

    from gspo_cli.config.schema import to_jsonable
    from gspo_cli.fsutil import atomic_write_json, atomic_write_text
    from gspo_cli.jobs.secret_env import redact_preset

    data = _absolute_paths(redact_preset(to_jsonable(req.preset)))  # run folders never hold secret values
    atomic_write_text(run_dir / "config.yaml", yaml.safe_dump(data, sort_keys=False))
    atomic_write_json(run_dir / "config.json", data)


def _absolute_paths(data: dict) -> dict:
    """Relative paths of the preset made absolute: the Ray job runs in another working directory."""
    for key in ("data_dir", "runs_dir"):
        if data["paths"].get(key):
            data["paths"][key] = str(Path(data["paths"][key]).expanduser().resolve())
    model = Path(data["model"]["path"]).expanduser()
    if model.exists():  # a local folder (else builtin:tiny or a hub id)
        data["model"]["path"] = str(model.resolve())
    return data


REQUEST_FILE = "train_request.json"


def entry_args(run_dir: Path) -> list[str]:
    """The job's argv: its request file in the run folder (the resolved preset is the run's config.json)."""
    from gspo_cli.jobs import request as job_request

    payload = {"config": str(run_dir / "config.json"), "run_dir": str(run_dir)}
    return [str(job_request.write(JOB_COMMAND, payload, run_dir / REQUEST_FILE))]


def launch(req: TrainRequest) -> int:
    from gspo_cli.console import err
    from gspo_cli.engines.native import faults
    from gspo_cli.jobs import client as jobs

    faults.check_env()  # a malformed GSPO_FAULT: one line here, not a failed job and a trailer to no files
    if req.resume:
        req = resumed(req)
    if _already_complete(req):
        return 0
    if req.dry_run:
        from gspo_cli.engines.native.dryrun import dry_run

        return dry_run(req)  # its own preflight; creates nothing
    check_inputs(req)
    _check_model(req)
    run_dir = run_path(req)
    if (problem := trackers.problem(req.preset, os.environ, trackers.missing_here(req.preset))) is not None:
        raise problem  # a tracker package the job's Python lacks, an online mode without its key

    def write_run(target, job_id: str) -> None:
        # One writer per run: the lock is held (runs/lock.LockClaim), then the config and the request are written.
        write_config(req, run_dir)
        err.print(f"Run folder: {run_dir}")

    from gspo_cli.env.exports import job_vars
    from gspo_cli.jobs.jobspec import JobSpec

    # the native engine asks a node for nothing beyond what Ray counts (its spec's node_resources): no `node`
    job = JobSpec(JOB_COMMAND, lambda: entry_args(run_dir), preset=req.preset, run=run_dir.name,
                  env_vars={**job_vars(req.preset), **trackers.keys(req.preset, os.environ)},  # keys: secrets
                  claim=run_lock.LockClaim(run_dir, "native", on_taken=write_run,
                                           takeover="it resumes from its newest checkpoint"))
    code = jobs.run_job(job, address=req.address, local=req.local, json_out=req.json_out, follow=req.follow)
    # stderr, so it is there with --json too (stdout then holds only the result)
    err.print(where_lines(run_dir), highlight=False)
    return code


def where_lines(run_dir: Path) -> str:
    """Where the run's files are: only those that exist (trainer.save_freq=-1 saves no checkpoint)."""
    from gspo_cli import layout

    ckpts = layout.checkpoints_dir(run_dir)
    saved = ckpts if layout.list_steps(run_dir) else "none saved (trainer.save_freq)"
    return f"Run: {run_dir}\n  metrics: {run_dir / 'metrics.jsonl'}\n  checkpoints: {saved}"


def _check_model(req: TrainRequest) -> None:
    """A pinned hub model not prepared, or a hub id that is neither cached nor reachable, fails here, in seconds,
    not inside the job after retries."""
    from gspo_cli.models.loading import resolve_preset_model

    path = req.preset.model.path
    if path.startswith("builtin:") or Path(path).expanduser().exists():
        return
    if resolve_preset_model(req.preset, req.preset_ref) != path:
        return  # the prepared folder of a pinned hub model, checked against its manifest
    from gspo_cli.models.reachable import require_hub_id

    require_hub_id(path, "model.path")


def resumed(req: TrainRequest) -> TrainRequest:
    """`--resume RUN`: the request that continues RUN from its newest complete checkpoint. The native engine
    resumes a run by its name (trainer.resume_mode: auto), so this is the run's name with the preset the CLI
    loaded (the run's config.yaml, unless --preset named another), after the checks that make it work."""
    from dataclasses import replace

    from gspo_cli import layout
    from gspo_cli.runs.names import existing_run
    from gspo_cli.shell import command

    try:
        run_dir = existing_run(req.resume or "", req.preset)
    except ConfigError as exc:
        raise ConfigError(f"--resume: {exc.message}", exc.hint) from None
    if req.run_name and req.run_name != run_dir.name:
        raise ConfigError(f"--resume {req.resume!r} and --run-name {req.run_name!r} name two runs",
                          "drop --run-name: --resume continues the run it names")
    if run_dir_for(run_dir.name, req.preset).resolve() != run_dir.resolve():
        raise ConfigError(f"--resume {req.resume!r}: the preset writes its runs to "
                          f"{run_dir_for(run_dir.name, req.preset).parent}, not {run_dir.parent}",
                          "drop --preset: --resume reads the run's own config.yaml")
    if req.preset.trainer.resume_mode == "disable":
        raise ConfigError("--resume with trainer.resume_mode: disable would start the run over",
                          "drop the --set of trainer.resume_mode (auto resumes from the newest checkpoint)")
    if not layout.list_steps(run_dir):
        start = command("gspo", "train", "--preset", str(run_dir / "config.yaml"), "--run-name", run_dir.name)
        raise ConfigError(f"--resume {req.resume!r}: {layout.checkpoints_dir(run_dir)} has no complete "
                          "global_step_N checkpoint", f"the run saved none yet (trainer.save_freq); start it "
                          f"again: {start}")
    return replace(req, run_name=run_dir.name, resume=None)


def _already_complete(req) -> bool:
    """A rerun of a finished run (same --run-name, resume_mode auto): say so and how to extend it, start nothing."""
    from gspo_cli import layout
    from gspo_cli.console import err

    t = req.preset.trainer
    run_dir = run_dir_for(run_name_for(req), req.preset)
    steps = layout.list_steps(run_dir)
    if t.resume_mode == "disable" or not t.total_training_steps or not steps or steps[-1] < t.total_training_steps:
        return False
    from gspo_cli.runs import catalog

    # the same commands `gspo runs show` suggests for a finished run (catalog.commands: one source)
    info = {**catalog.run_info(run_dir, size=False), "status": "finished", "engine": t.engine,
            "total_steps": t.total_training_steps, "checkpoints": catalog.checkpoints(run_dir)}
    commands = catalog.commands(info, catalog.load_config(run_dir) or {"name": req.preset.name})
    width = max(len(k) for k in commands)
    err.print(f"Run {run_dir.name} is already complete: checkpoint at step {steps[-1]} of "
              f"trainer.total_training_steps={t.total_training_steps}. Nothing to train.\nNext:\n"
              + "\n".join(f"  {k:<{width}}  {v}" for k, v in commands.items()), highlight=False, markup=False)
    return True

"""The verl training job: `python -u -m gspo_cli.job_kinds verl-train <run>/verl_job.json`.

It runs `python -m verl.trainer.main_ppo <overrides>` in the run folder under the job wrapper
(gspo_cli/jobs/supervise.py), which passes verl's log through, turns new lines of `runs/<run>/metrics.jsonl`
(verl's file logger) into progress events (step/total, reward, response length, step time, clip fraction),
applies the health rules, and restarts verl from the last complete checkpoint on transient failures. Overrides
travel in the JSON spec rather than on the command line: 80 Hydra overrides with lists and quotes do not survive
shell quoting reliably, and the file stays in the run folder as the record of what ran.

verl's file logger opens metrics.jsonl with "wb" (truncating it), so before a resumed attempt the history up to
the resumed step is set aside (gspo_cli/metrics/jsonl.set_aside_for_resume) and put back in front afterwards.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli.metrics import jsonl as metrics_jsonl

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

SPEC_FILE = "verl_job.json"
# The trainer command; the overrides follow it. A spec's "trainer_command" replaces it: tests run a labelled
# stand-in that writes verl-format metrics and fails the way verl does, to exercise this wrapper without a cluster.
MAIN_MODULE = "verl.trainer.main_ppo"

# Headline metrics shown in the progress bar (verl names) -> short label.
PROGRESS_METRICS = {
    "critic/score/mean": "reward",
    "critic/acc/mean": "acc",  # when the reward function logs it (verl 0.9.1 logs accuracy for validation only)
    "response_length/mean": "resp_len",
    "timing_s/step": "step_s",
    "actor/pg_clipfrac": "clipfrac",
}

_RESUME_KEYS = ("trainer.resume_mode", "trainer.resume_from_path")


def restart_overrides(overrides: list[str], checkpoint: Path | None) -> list[str]:
    """The overrides of a restart: resume from `checkpoint` (None: no checkpoint yet, start from scratch)."""
    kept = [o for o in overrides if o.lstrip("+").split("=", 1)[0] not in _RESUME_KEYS]
    if checkpoint is None:
        return [*kept, "trainer.resume_mode=disable"]
    return [*kept, "trainer.resume_mode=resume_path", f"trainer.resume_from_path={checkpoint}"]


class VerlAttempts:
    """The verl-specific side of each attempt: command line, metrics set-aside and restore."""

    def __init__(self, spec: dict, run_dir: Path) -> None:
        self.spec = spec
        self.run_dir = run_dir
        self.metrics = Path(spec["metrics_file"]) if spec.get("metrics_file") else run_dir / "metrics.jsonl"
        self.aside: Path | None = None

    def resume_step(self) -> int | None:
        from gspo_cli.engines.verl.resume_point import resume_point

        point = resume_point(self.run_dir, self.metrics)
        if point.note():
            print(f"gspo: {point.note()}", flush=True)
        return point.step

    def command(self, index: int, resume_step: int | None) -> list[str]:
        overrides = list(self.spec["overrides"])
        if index:
            from gspo_cli import layout

            ckpt = layout.checkpoints_dir(self.run_dir) / f"global_step_{resume_step}" if resume_step else None
            overrides = restart_overrides(overrides, ckpt)
        return [*(self.spec.get("trainer_command") or [sys.executable, "-u", "-m", MAIN_MODULE]), *overrides]

    def before(self, index: int, resume_step: int | None) -> None:
        from gspo_cli import layout
        from gspo_cli.models.safe_load import check_checkpoint

        if index == 0:
            resume = self.spec.get("resume_from")
            m = re.search(r"global_step_(\d+)", resume or "")
            step = int(m.group(1)) if m else None
            checkpoint = Path(resume) if resume else None
        else:
            step = resume_step or 0
            checkpoint = layout.checkpoints_dir(self.run_dir) / f"global_step_{resume_step}" if resume_step else None
        if checkpoint is not None:
            # verl unpickles the checkpoint's files in full (weights_only=False): gspo loads each weights-only
            # first, so a planted pickle is refused here, in one line, before verl touches it (docs/security.md)
            check_checkpoint(checkpoint)
        if step is not None:
            self.aside = metrics_jsonl.set_aside_for_resume(self.metrics, step)
        elif index:
            self.metrics.unlink(missing_ok=True)

    def after(self) -> None:
        if self.aside is not None:
            metrics_jsonl.restore_after_resume(self.metrics, self.aside)
            self.aside = None


def job_main(argv: list[str]) -> int:
    """Job entry: run verl's main_ppo with the run's overrides under the job wrapper."""
    from gspo_cli.config.schema import Preset
    from gspo_cli.jobs import events
    from gspo_cli.jobs.supervise import Child, supervise

    if len(argv) != 1:
        print("usage: python -m gspo_cli.job_kinds verl-train RUN_DIR/verl_job.json", file=sys.stderr)
        return 2
    spec_path = Path(argv[0]).resolve()
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    env = checked_env(spec, spec_path)  # before anything starts: a planted variable ends the job in one line
    # verl (Hydra) writes outputs/<date>/<time>/ under its cwd: keep that inside the run folder.
    run_dir = spec_path.parent
    preset = _load_preset(run_dir, Preset)
    verl = VerlAttempts(spec, run_dir)
    events.message(f"starting verl: {len(spec['overrides'])} overrides, metrics -> {verl.metrics}")
    events.message("verl starts its Ray workers and the vLLM server before the first step (minutes; a CPU host or "
                   "a 32B model take longest): a line per step follows")
    child = Child(name="verl", run_dir=run_dir, metrics=verl.metrics, command=verl.command, cwd=run_dir,
                  env=env, total_steps=spec.get("total_steps"),
                  progress_from_metrics=True, progress_metrics=PROGRESS_METRICS, before_attempt=verl.before,
                  after_attempt=verl.after, resume_step=verl.resume_step, **_capacity(spec, preset, run_dir.name))
    from gspo_cli.runs import state

    # job_state.json: running, then how it ended (`gspo runs list`)
    return state.run_tracked(run_dir, "verl", lambda: supervise(
        child, preset, on_failure=lambda kind, cause: state.note_failure(run_dir, kind, cause)))


def checked_env(spec: dict, spec_path: Path) -> dict[str, str]:
    """The job file's `env_vars`, checked again here: the run folder may have been written between `gspo train`
    and this start. Each name passes the env rule (config/env_rule.py) or is one gspo sets itself, with gspo's
    value (compile.own_env); otherwise ConfigError naming the variable and the file (never its value)."""
    from gspo_cli.config import env_rule
    from gspo_cli.engines.verl.compile import METRICS_ENV, own_env
    from gspo_cli.errors import ConfigError
    from gspo_cli.shell import is_name
    from gspo_cli.untrusted import clean

    env = spec.get("env_vars") or {}
    hint = ("gspo never writes it there: the run folder was changed after `gspo train` wrote it; check the folder "
            "and start the run again with `gspo train` (docs/security.md, the env-var rule)")
    if not isinstance(env, dict):
        raise ConfigError(f"{spec_path}: env_vars is not a mapping of variables", hint)
    own = own_env(spec_path.parent)
    for name, value in env.items():
        why = None
        if not is_name(name) or not isinstance(value, str) or "\0" in value:
            why = "not a variable name with a text value"
        elif name in own:
            same = Path(value).resolve() == Path(own[name]).resolve() if name == METRICS_ENV else value == own[name]
            why = None if same else f"gspo sets {name} itself, to {own[name]!r} for this run"
        elif (verdict := env_rule.judge(name)).kind == env_rule.REFUSED:
            why = verdict.why
        if why:
            raise ConfigError(f"{spec_path}: env_vars.{clean(name)} is refused: {why}", hint)
    return dict(env)


def _capacity(spec: dict, preset: Preset, run_name: str) -> dict:
    """The wrapper's device-slot check (jobs/capacity.py) for what the job file says the job needs (decided when
    it was compiled, its device resolved then): a clear end instead of verl waiting forever for its placement
    groups (after a node loss, or on a cluster without the slots); off with trainer.restart.capacity_check: false."""
    import time

    from gspo_cli.jobs import capacity

    need = capacity.Need.from_json(spec.get("need"))
    if need is None or not preset.trainer.restart.capacity_check:
        return {}
    return {"capacity": capacity.checker(need, since=time.time(), run_name=run_name)}


def _load_preset(run_dir: Path, preset_cls):
    """The run's resolved preset (config.yaml, written by `gspo train`): its trainer.health and restart settings
    drive the wrapper."""
    from gspo_cli.errors import ConfigError

    config = run_dir / "config.yaml"
    if not config.is_file():
        raise ConfigError(f"{config} is missing", "the run folder is incomplete; start it with `gspo train`")
    from gspo_cli.config import yaml_limits

    return preset_cls.model_validate(yaml_limits.load(config.read_text(encoding="utf-8"), str(config)))

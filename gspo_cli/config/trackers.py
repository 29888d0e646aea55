"""Experiment trackers (TensorBoard, Weights & Biases, SwanLab) for both engines: the one place that says what each
logger name means, where its files go in the run folder, which variables set it and which key an online mode needs.

A preset names its loggers in `trainer.loggers` (verl's names, verl/utils/tracking.py `Tracking.supported_backend`)
and their modes in `trainer.trackers`; `trainer.project_name` / `trainer.experiment_name` (default: the run's name)
name the run in each tracker. Both engines log the same dict per step as metrics.jsonl holds, so the metric names
are verl's in every tracker. What verl 0.9.1 reads (verl/utils/tracking.py):

- tensorboard: `TENSORBOARD_DIR` (else tensorboard_log/<project>/<experiment> under the job's cwd), torch's
  SummaryWriter, `add_scalar(key, value, step)` per metric;
- wandb: `wandb.init(project, name, config)`, the mode and folder from `WANDB_MODE` / `WANDB_DIR`, the key from
  `WANDB_API_KEY`; `wandb.log(data, step)`;
- swanlab: `swanlab.init(project, experiment_name, config, logdir=SWANLAB_LOG_DIR, mode=SWANLAB_MODE)`,
  `swanlab.login(SWANLAB_API_KEY)` when the key is set.

gspo sets those variables for a verl job and hands the same values to the native engine's writers
(engines/native/trackers.py), so both write to `runs/<run>/tensorboard`, `runs/<run>/wandb`, `runs/<run>/swanlog`.
Offline modes are the default: nothing leaves the machine (wandb's `offline`: a `.wandb` log for `wandb sync`;
SwanLab's `offline`: a run folder for `swanlab sync`. SwanLab 0.10's `local` mode needs its dashboard package
swanboard==0.1.10b2, which the index does not carry, so gspo offers `offline`). An `online` mode needs its key in
the environment of `gspo train` (never in a preset file): it travels to the job as a secret (jobs/secret_env.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gspo_cli.config.section import Section
from gspo_cli.errors import ConfigError

# verl 0.9.1's logger names (verl/utils/tracking.py Tracking.supported_backend): what trainer.logger accepts
VERL_LOGGERS = ("wandb", "mlflow", "swanlab", "vemlp_wandb", "tensorboard", "console", "clearml", "trackio", "file",
                "rl_insight")
TRACKER_NAMES = ("tensorboard", "wandb", "swanlab")  # the trackers both engines write
NATIVE_LOGGERS = ("console", "file", *TRACKER_NAMES)  # console: progress lines; file: metrics.jsonl (always)
Mode = Literal["offline", "online"]


class WandbSettings(Section):
    # offline: runs/<run>/wandb/offline-run-*/run-*.wandb, nothing sent (`wandb sync` uploads it later);
    # online: streams to W&B, needs WANDB_API_KEY in the environment of `gspo train`.
    mode: Mode = "offline"


class SwanlabSettings(Section):
    # offline: runs/<run>/swanlog/run-*/run-*.swanlab, nothing sent (`swanlab sync` uploads it later);
    # online: streams to SwanLab, needs SWANLAB_API_KEY in the environment of `gspo train`.
    mode: Mode = "offline"


class TrackersSection(Section):
    """How the trackers named in trainer.loggers run (docs/trackers.md)."""

    wandb: WandbSettings = WandbSettings()
    swanlab: SwanlabSettings = SwanlabSettings()


@dataclass(frozen=True)
class Tracker:
    name: str
    module: str  # what the job's interpreter must import
    folder: str  # under the run folder
    key_var: str = ""  # the API key an online mode needs
    package: str = ""  # the distribution to install


TRACKERS: dict[str, Tracker] = {
    "tensorboard": Tracker("tensorboard", "tensorboard", "tensorboard", package="tensorboard"),
    "wandb": Tracker("wandb", "wandb", "wandb", "WANDB_API_KEY", "wandb"),
    "swanlab": Tracker("swanlab", "swanlab", "swanlog", "SWANLAB_API_KEY", "swanlab"),
}
# the variables gspo sets from trainer.trackers (a preset's env.vars may not set them: two sources of one fact)
OWNED_VARS = ("TENSORBOARD_DIR", "WANDB_MODE", "WANDB_DIR", "SWANLAB_MODE", "SWANLAB_LOG_DIR")


def check_loggers(value: list[str]) -> list[str]:
    """The schema's door for trainer.loggers: verl's names only, each once."""
    unknown = [n for n in value if n not in VERL_LOGGERS]
    if unknown:
        raise ValueError(f"unknown logger {unknown[0]!r}: verl 0.9.1 knows {', '.join(VERL_LOGGERS)}")
    if len(set(value)) != len(value):
        raise ValueError("a logger is named twice")
    return value


def used(preset: Any) -> list[Tracker]:
    """The trackers the preset's trainer.loggers turn on."""
    return [TRACKERS[n] for n in preset.trainer.loggers if n in TRACKERS]


def mode(preset: Any, name: str) -> Mode:
    """offline | online for wandb and swanlab; tensorboard only writes files."""
    settings = getattr(preset.trainer.trackers, name, None)
    return settings.mode if settings is not None else "offline"


def experiment(preset: Any, run_dir: Path) -> str:
    return preset.trainer.experiment_name or Path(run_dir).name


def folder(run_dir: Path, name: str) -> Path:
    return Path(run_dir) / TRACKERS[name].folder


def env(preset: Any, run_dir: Path) -> dict[str, str]:
    """The variables verl's Tracking reads, for the trackers the preset uses (no keys: see `keys`)."""
    out: dict[str, str] = {}
    names = {t.name for t in used(preset)}
    if "tensorboard" in names:
        out["TENSORBOARD_DIR"] = str(folder(run_dir, "tensorboard"))
    if "wandb" in names:
        # wandb makes <WANDB_DIR>/wandb/<offline-run-...>; WANDB_DIR is the run folder so that is runs/<run>/wandb
        out.update(WANDB_MODE=mode(preset, "wandb"), WANDB_DIR=str(Path(run_dir)))
    if "swanlab" in names:
        out.update(SWANLAB_MODE=mode(preset, "swanlab"), SWANLAB_LOG_DIR=str(folder(run_dir, "swanlab")))
    return out


def online(preset: Any) -> list[Tracker]:
    return [t for t in used(preset) if t.key_var and mode(preset, t.name) == "online"]


def keys(preset: Any, environ: Mapping[str, str]) -> dict[str, str]:
    """The API keys the job needs from `environ` (the `gspo train` process's): only for online modes, and not when
    the preset's env.vars already carries it (both are secrets: a 0600 file, never runtime_env or a run folder)."""
    return {t.key_var: environ[t.key_var] for t in online(preset)
            if environ.get(t.key_var) and t.key_var not in preset.env.vars}


def check_keys(preset: Any, environ: Mapping[str, str]) -> None:
    """ConfigError (one line) for an online mode without its key."""
    for t in online(preset):
        if not environ.get(t.key_var) and not preset.env.vars.get(t.key_var):
            raise ConfigError(f"trainer.trackers.{t.name}.mode is online but {t.key_var} is not set",
                              f"export {t.key_var}=... in the shell that runs gspo train (never in a preset file), "
                              f"or --set trainer.trackers.{t.name}.mode=offline")


def check_env(preset: Any) -> None:
    """A preset's env.vars may not set what trainer.trackers / the run folder decide (ValueError: the schema's)."""
    clash = [n for n in OWNED_VARS if n in preset.env.vars]
    if clash:
        raise ValueError(f"env.vars.{clash[0]} is set by gspo from trainer.loggers / trainer.trackers (runs/<run>/"
                         "...): remove it, and choose the mode with trainer.trackers.wandb.mode / swanlab.mode")


def missing_modules(preset: Any, modules: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(module, fix) for each tracker the preset uses whose module the job's interpreter lacks (`modules`: a
    stack probe's module -> file, None when absent)."""
    return [(t.module, f"pip install {t.package} (or pip install 'gspo[trackers]')") for t in used(preset)
            if modules.get(t.module) is None]


def missing_here(preset: Any) -> list[tuple[str, str]]:
    """The same, for this interpreter (an import-free lookup)."""
    import importlib.util

    return missing_modules(preset, {t.module: importlib.util.find_spec(t.module) for t in used(preset)})


def raise_if_missing(preset: Any, missing: list[tuple[str, str]]) -> None:
    if missing:
        module, fix = missing[0]
        raise ConfigError(f"trainer.loggers has {module} but the job's Python cannot import {module}",
                          f"{fix}; or remove it from trainer.loggers")


def problem(preset: Any, environ: Mapping[str, str], missing: list[tuple[str, str]]) -> ConfigError | None:
    """The first thing that stops the trackers (a package the job's Python lacks, an online mode's key), or None."""
    try:
        raise_if_missing(preset, missing)
        check_keys(preset, environ)
    except ConfigError as exc:
        return exc
    return None


def check(preset: Any, run_dir: Path, environ: Mapping[str, str], missing: list[tuple[str, str]]) -> Any:
    """The dry-run's `trackers` row: where each tracker writes and in which mode, or what stops it."""
    from gspo_cli.checks import ERROR, OK, Check

    found = problem(preset, environ, missing)
    if found is not None:
        return Check("trackers", ERROR, found.message, ["trainer.loggers", "trainer.trackers"], found.hint or "")
    parts = [f"{t.name}{'' if t.name == 'tensorboard' else ' ' + mode(preset, t.name)} -> {folder(run_dir, t.name)}"
             + (f" (key: {t.key_var} from the environment, sent as a secret)" if t in online(preset) else "")
             for t in used(preset)]
    return Check("trackers", OK, "; ".join(parts) if parts else "none beyond console and metrics.jsonl")

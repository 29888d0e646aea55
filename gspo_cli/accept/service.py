"""`gspo accept` as a service: pick the baseline, run its job through the preset (or read a finished run), judge
the run against the baseline, or record a baseline from the run (`--record`).

The job is a plain `gspo train` of the preset (same engine launcher, Ray job or `--local`) in a fresh run folder
`accept-<preset>-<timestamp>`; a recorded baseline keeps the `--set`s that shorten a preset to the nightly shape
(RECORD_SETS: 15 steps, no checkpoint, no validation, as upstream's nightly scripts run). `--set` at acceptance
time changes the job on top of that (the way to see a changed setting fail).

A baseline file is data (docs/security.md): gspo takes its values and rules, and runs only the user's own
`--preset` and `--set` (plus those of its `sets` that are gspo's own nightly shape, RECORD_SETS). Its recorded
preset and other `sets` are shown (`Job.not_applied`, before the run and in `--json`), never run. Only a baseline
shipped with gspo names the preset to run by itself.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gspo_cli.accept import baselines, hints
from gspo_cli.accept import rules as R
from gspo_cli.errors import ClusterError, ConfigError

STEPS = 15  # the nightly scripts' TOTAL_TRAINING_STEPS: steps 5-14 are judged, memory at the last step
RECORD_SETS = [f"trainer.total_training_steps={STEPS}", "trainer.save_freq=-1", "trainer.test_freq=-1",
               "trainer.val_before_train=false"]
NOISY_HOST = ("time metrics of a baseline recorded on a CPU host are advisory: a shared CPU's step time swings "
              "2-3x with whatever else runs (presets/tiny.yaml, trainer.health.throughput)")


def record_preset(preset: str, sets: list[str]) -> Any:
    """The preset as `--record` runs it: gspo's nightly shape (RECORD_SETS: 15 steps, no checkpoints, no
    validation) under the user's `--set`s."""
    from gspo_cli.config.presets import load_preset

    return load_preset(preset, [*RECORD_SETS, *sets])


def shown(sets: list[str]) -> list[str]:
    """`--set` items as gspo prints or saves them: secrets redacted by key path (private.redact_set)."""
    from gspo_cli.private import redact_set

    return [redact_set(item) for item in sets]


@dataclass
class AcceptRequest:
    preset: str | None = None
    sets: list[str] = field(default_factory=list)
    baseline: str | None = None  # a shipped id or a file
    run: str | None = None  # judge (or record from) this finished run instead of training
    record: bool = False
    repeat: int = 1  # --record: runs of the job; limits widen to their spread where it is larger
    output: str | None = None  # --record: where to write (default $GSPO_HOME/baselines/<preset>.json)
    local: bool = False
    address: str | None = None
    # what `--record` costs for the preset ("15 steps x ~2,585 s predicted (a3 profile) = ~10h46m on 64 NPU"), for
    # the hint of a preset without a baseline: the CLI hands in the planner's answer (plan/ sits beside accept/)
    record_cost: Callable[[], str] | None = None
    # what runs, shown before anything starts (the CLI hands in its view: accept/view.py `render_job`)
    on_job: Callable[[Job], None] | None = None


@dataclass
class Job:
    """What an acceptance run runs, decided before it starts, and what the baseline recorded but gspo does not run."""

    baseline: baselines.Baseline
    preset: str | None
    sets: list[str]
    not_applied: list[str] = field(default_factory=list)  # the baseline's own sets that are not gspo's nightly shape
    run: str | None = None  # --run: a finished run is judged, nothing runs

    def as_dict(self) -> dict[str, Any]:
        return {"preset": self.preset, "sets": shown(self.sets), "recorded_preset": self.baseline.preset,
                "recorded_sets": shown(self.baseline.sets), "sets_not_applied": shown(self.not_applied)}


@dataclass
class Outcome:
    baseline: baselines.Baseline
    run_dir: Path
    preset: str | None
    sets: list[str]
    verdict: R.Verdict | None = None
    recorded_to: Path | None = None
    job: Job | None = None

    def as_dict(self) -> dict[str, Any]:
        b = self.baseline
        out: dict[str, Any] = {"run": str(self.run_dir), "preset": self.preset, "sets": shown(self.sets),
                               "baseline": {"id": b.id, "title": b.title, "file": b.path, "source": b.source,
                                            "recorded": b.recorded, "recorded_preset": b.preset,
                                            "recorded_sets": shown(b.sets),
                                            "sets_not_applied": shown(self.job.not_applied if self.job else [])}}
        if self.verdict is not None:
            v = self.verdict
            out.update(verdict="pass" if v.passed else "fail", window_steps=v.window_steps, last_step=v.last_step,
                       metrics=[{**m.as_dict(), "hint": hints.hint(m.metric) if m.status in ("fail", "missing")
                                 else None} for m in v.metrics])
        if self.recorded_to is not None:
            out["recorded_to"] = str(self.recorded_to)
        return out

    @property
    def exit_code(self) -> int:
        """1 when the judged run is out of its baseline's tolerance, else 0 (a recording has no verdict)."""
        return 1 if self.verdict is not None and not self.verdict.passed else 0


def route_refusal(b: baselines.Baseline) -> ConfigError:
    return ConfigError(
        f"baseline {b.id} ({b.machine}) comes from verl's {b.route} route, which gspo does not compile: gspo cannot "
        "run its job", f"gspo runs the routes {', '.join(baselines.ROUTES)} (`gspo accept --list`); compare upstream's "
        f"steps 5-14 with {b.source.get('url', b.path)} by hand")


def prepare(req: AcceptRequest) -> Job:
    """The baseline and the job to run against it (the CLI shows it before the run starts)."""
    b = baselines.resolve(req.baseline, req.preset, req.record_cost)
    if b.route not in baselines.ROUTES or (b.preset is None and not req.preset and not req.run):
        if b.route not in baselines.ROUTES:
            raise route_refusal(b)
        raise ConfigError(f"baseline {b.id} names no preset to run", "pass --preset NAME (the preset whose job "
                          "made this baseline), or --run RUN to judge a finished run")
    if not b.shipped and not req.preset and not req.run:
        from gspo_cli.shell import quote

        raise ConfigError(f"baseline {b.path or b.id} records preset {b.preset!r}; gspo runs only a preset you "
                          "name, never a baseline file's",
                          f"pass --preset {quote(str(b.preset))} (`gspo presets show` it first), or --run RUN to "
                          "judge a finished run")
    preset = _preset_name(req.preset, b) if b.shipped or req.preset else None
    own = [s for s in b.sets if s in RECORD_SETS]  # gspo's nightly shape: the file only says it was used
    not_applied = [] if b.shipped else [s for s in b.sets if s not in RECORD_SETS]
    sets = [*(b.sets if b.shipped else own), *req.sets]
    return Job(b, preset, sets if not req.run else [], not_applied, req.run)


def accept(req: AcceptRequest, job: Job | None = None) -> Outcome:
    """Judge (or with `record`, record) one acceptance run (`job`: `prepare(req)`, shown by the caller)."""
    if req.record:
        return record(req)
    job = job or prepare(req)
    if req.on_job is not None:
        req.on_job(job)
    b = job.baseline
    run_dir = _finished_run(req.run) if req.run else _train(job.preset, job.sets, req)
    verdict = R.compare(_by_step(run_dir), b.values, b.rules)
    return Outcome(b, run_dir, job.preset, job.sets, verdict, job=job)


def record(req: AcceptRequest) -> Outcome:
    """Run the preset's nightly-shaped job (or read `--run`) and write its reduced values as a baseline."""
    if not req.preset:
        raise ConfigError("--record needs --preset NAME", "the baseline is recorded for that preset's job")
    if req.baseline:
        raise ConfigError("--record writes a baseline; --baseline reads one", "drop one of them (--output FILE "
                          "says where --record writes)")
    if req.repeat < 1 or (req.run and req.repeat != 1):
        raise ConfigError(f"--repeat {req.repeat}: give a count of 1 or more, and no --run with it",
                          "--repeat N runs the job N times (a finished --run is one run)")
    sets = [*RECORD_SETS, *req.sets]
    loaded = record_preset(req.preset, req.sets)
    rules = R.UPSTREAM_RULES
    from gspo_cli.config import devices

    if not devices.of(loaded).accelerator:  # a CPU host: time metrics are advisory (docs/accept.md)
        rules = R.noisy_host(rules, NOISY_HOST)
    runs: list[tuple[Path, R.RunValues]] = []
    for _ in range(req.repeat):
        run_dir = _finished_run(req.run) if req.run else _train(req.preset, sets, req, loaded)
        got = R.reduce_run(_by_step(run_dir), rules)
        if not got.window_steps:
            raise ConfigError(f"run {run_dir.name} has no step in {R.WINDOW[0]}-{R.WINDOW[1]}: nothing to record",
                              f"record from a run of at least {R.WINDOW[1]} steps (without --run, gspo runs "
                              f"{STEPS})")
        runs.append((run_dir, got))
    run_dir, run = runs[0]
    repeats: dict[str, list[float]] = {m: [v for _, r in runs if (v := r.values[m]) is not None] for m in run.values}
    values: dict[str, float | None] = {m: (sum(v) / len(v) if v else None) for m, v in repeats.items()}
    rules = R.widen(rules, repeats)
    b = baselines.Baseline(
        id=f"recorded:{req.preset}", title=f"{req.preset}, recorded on {platform.node()}",
        values=values, rules=rules, preset=req.preset, sets=sets, machine=f"{platform.node()} "
        f"({loaded.cluster.nnodes} x {loaded.cluster.devices_per_node} {loaded.cluster.device})",
        source={"run": str(run_dir), "what": "mean of steps 5-14 (memory: last step) of the run, as check_npu.py "
                "reduces a log; with --repeat N the mean over the N runs"},
        recorded={"run": str(run_dir), "host": platform.node(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                  "repeats": [{"run": str(d), "values": r.values} for d, r in runs],
                  "window_steps": run.window_steps, "last_step": run.last_step,
                  "per_step": {m: {str(s): v for s, v in steps.items()} for m, steps in run.per_step.items()}})
    dest = Path(req.output).expanduser() if req.output else baselines.recorded_path(req.preset)
    from gspo_cli.fsutil import atomic_write_json

    dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(dest, b.as_dict())
    b.path = str(dest)
    return Outcome(b, run_dir, req.preset, sets, recorded_to=dest)


def list_baselines() -> dict[str, list[baselines.Baseline]]:
    return {"upstream": baselines.shipped(), "recorded": baselines.recorded()}


# ------------------------------------------------------------------ pieces


def _preset_name(given: str | None, b: baselines.Baseline) -> str | None:
    if given and b.preset and given != b.preset:
        raise ConfigError(f"--preset {given} differs from the preset of baseline {b.id} ({b.preset})",
                          f"drop --preset (the baseline runs {b.preset}), or pick that preset's baseline")
    return given or b.preset


def _finished_run(ref: str) -> Path:
    from gspo_cli.runs.refs import resolve_run

    return resolve_run(ref)


def _train(preset: str | None, sets: list[str], req: AcceptRequest, loaded: Any = None) -> Path:
    """A fresh run of `preset` with `sets`, through the preset's engine, as `gspo train` runs it."""
    from gspo_cli import layout
    from gspo_cli.config.presets import load_preset
    from gspo_cli.engines import TrainRequest, get_engine
    from gspo_cli.runs.names import run_dir_for

    if not preset:
        raise ConfigError("no preset to run", "pass --preset NAME")
    loaded = loaded or load_preset(preset, sets)
    name = f"accept-{layout.new_run_name(loaded.name)}"
    train = TrainRequest(preset=loaded, preset_ref=preset, sets=sets, run_name=name, local=req.local,
                         address=req.address)
    code = get_engine(loaded.trainer.engine)(train)
    run_dir = run_dir_for(name, loaded)
    if code:
        raise ClusterError(f"the acceptance run {name} failed (exit code {code}): no verdict",
                           f"its log: gspo runs show {name}; fix the run, then rerun gspo accept")
    return run_dir


def _by_step(run_dir: Path) -> dict[int, dict[str, Any]]:
    from gspo_cli import layout
    from gspo_cli.metrics.jsonl import last_per_step

    path = layout.metrics_file(run_dir)
    if not path.is_file():
        raise ConfigError(f"run {run_dir.name} has no metrics.jsonl", f"is {run_dir} a finished gspo run?")
    return last_per_step(path)

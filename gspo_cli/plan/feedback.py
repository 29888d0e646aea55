"""`gspo plan --calibrate RUN`: predicted vs measured per phase for a finished (or running) run, and the profile
factors that would make the model match it (`--save-profile NAME` keeps them in $GSPO_HOME/profiles).

The run's own lengths (prompt_length/mean, response_length/mean, response_length/clip_ratio) replace the
model's assumption, so what is left is the machine: the factors the fit changes.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from gspo_cli.errors import ConfigError
from gspo_cli.plan import calibration, memory
from gspo_cli.plan.model import PHASES
from gspo_cli.plan.workload import from_preset, lengths_from
from gspo_cli.sizing import profiles

LENGTH_KEYS = ("prompt_length/mean", "response_length/mean", "response_length/clip_ratio")
# Which factors a run can correct: decode overhead, training MFU and overhead, reward, fixed cost.
FACTORS = {"vllm": ("vllm_layer_overhead_s", "mfu_train", "reward_s_per_response", "step_fixed_s"),
           "hf": ("hf_layer_overhead_s", "native_mfu_train", "reward_s_per_response")}


@dataclass
class Calibration:
    run: Path
    profile: profiles.Profile
    steps: int
    rows: list[dict] = field(default_factory=list)  # phase, predicted, measured, error_pct, after_fit
    fitted: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"run": str(self.run), "profile": self.profile.name, "steps_used": self.steps, "phases": self.rows,
                "fitted_factors": self.fitted}


def run_medians(run: Path) -> tuple[dict[str, float], int]:
    """Median of each timing_s/* and length metric over the run's steps (the first step dropped: warm-up)."""
    from gspo_cli.layout import metrics_file
    from gspo_cli.metrics.jsonl import read_series

    path = metrics_file(run)
    series = read_series(path) if path.is_file() else {}
    steps = series.get("timing_s/step", [])
    if not steps:
        raise ConfigError(f"{path}: no timing_s/step metrics yet", "let the run log at least one training step")
    skip = {steps[0][0]} if len(steps) > 2 else set()
    keys = [k for k in series if k.startswith("timing_s/") or k in LENGTH_KEYS]
    out = {k: statistics.median(v for s, v in series[k] if s not in skip) for k in keys
           if any(s not in skip for s, _ in series[k])}
    return out, len(steps) - len(skip)


def calibrate(run_ref: str, profile: str | None = None) -> Calibration:
    from gspo_cli import layout
    from gspo_cli.config import presets
    from gspo_cli.plan.service import pick_profile

    candidate = Path(run_ref).expanduser()
    run = candidate if candidate.is_dir() else layout.run_dir(run_ref)
    config = run / "config.yaml"
    if not config.is_file():
        raise ConfigError(f"--calibrate {run_ref!r}: {config} not found", "pass a run name or folder under runs/")
    preset = memory.with_profile(presets.load(str(config)).preset, profile)
    prof = pick_profile(preset, profile)
    facts = memory.facts(preset)
    if facts is None:  # the same refusal as `gspo plan` without --calibrate (plan/service.predict)
        raise ConfigError(f"--calibrate {run_ref!r}: model {preset.model.path!r} has no config.json and is not a "
                          "known Qwen3 size", "point model.path at a local HF folder so its shape can be read")
    measured, steps = run_medians(run)
    lengths = lengths_from(measured, preset.data.max_prompt_length, preset.data.max_response_length)
    work = from_preset(preset, facts, lengths=lengths)
    result = Calibration(run, prof, steps)
    points = [calibration.Point(f"run/{ph}", ph, str(run), prof.name, work, ph, measured[f"timing_s/{ph}"], "fit")
              for ph in PHASES if measured.get(f"timing_s/{ph}", 0) > 0]
    points.append(calibration.Point("run/step", "step", str(run), prof.name, work, "step_s",
                                    measured["timing_s/step"], "fit"))
    result.fitted = calibration.fit_factors(prof, FACTORS[work.rollout], points, sweeps=3)
    tuned = prof.with_factors(**result.fitted)
    for p in points:
        pred = calibration.predicted(p, prof)
        result.rows.append({"phase": p.quantity, "predicted": pred, "measured": p.measured,
                            "error_pct": 100 * (pred - p.measured) / p.measured,
                            "after_fit": calibration.predicted(p, tuned)})
    return result


def save(result: Calibration, name: str) -> Path:
    return profiles.save_user(name, result.profile, result.fitted, str(result.run))

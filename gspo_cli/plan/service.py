"""`gspo plan`: the prediction for a preset as given, the layout search, `--write-preset`, the dry-run line."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli.errors import ConfigError
from gspo_cli.plan import layouts, memory, recommend, run_time
from gspo_cli.plan import model as step_model
from gspo_cli.plan.workload import Lengths, Workload, from_preset
from gspo_cli.sizing import profiles

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts
    from gspo_cli.sizing.report import Preflight, Report


@dataclass
class PlanResult:
    preset: Preset  # the preset as planned (with --nodes/--devices/--profile applied)
    profile: profiles.Profile
    workload: Workload
    prediction: step_model.Prediction
    verdict: memory.Verdict
    search: layouts.SearchResult | None = None
    search_s: float = 0.0
    recommendation: recommend.Recommendation | None = None

    def to_json(self) -> dict:
        out = {"preset": self.preset.name, "profile": self.profile.name, "devices": self.workload.devices,
               **self.prediction.to_json(), "memory_verdict": self.verdict.status, "memory": self.verdict.memory,
               "lengths": {"prompt_mean": round(self.workload.prompt_mean, 1),
                           "response_mean": round(self.workload.response_mean, 1),
                           "clip_frac": self.workload.lengths.clip_frac, "source": self.workload.lengths.source},
               "factors": self.profile.factors(), "sources": self.profile.sources, "caveat": self.profile.caveat}
        out["layouts"] = [lay.to_json() for lay in self.search.layouts] if self.search else []
        if self.search:
            out["modes"] = [lay.to_json() for lay in self.search.modes]
            best = self.best()
            out["best"] = best and (best.to_json() | {"vs_preset": round(self.vs_preset(best), 3),
                                                      "risk": self.risks(best)})
            out["search"] = {"evaluated": self.search.evaluated, "rejected": self.search.rejected,
                             "rejected_by": self.search.rejected_by, "seconds": round(self.search_s, 3)}
        if self.recommendation is not None:
            out["recommendation"] = self.recommendation.to_json()
        return out


    def best(self) -> layouts.Layout | None:
        """The recommended layout or async mode: the fastest whose preflight raises no warning (plan/recommend.py;
        a faster one that warns is listed beside it with its warning, not recommended)."""
        return self.recommendation.best if self.recommendation is not None else None

    def vs_preset(self, lay: layouts.Layout) -> float:
        base = self.prediction.tokens_per_device_per_s
        return lay.prediction.tokens_per_device_per_s / base if base else 0.0

    @staticmethod
    def risks(lay: layouts.Layout) -> list[str]:
        """What to watch when running `lay`: its staleness (async modes) and preflight's warnings (memory and the
        rest), one line each."""
        out = [] if lay.prediction.staleness == 0 else [
            f"trains on samples up to {lay.prediction.staleness} policy update(s) old (off-policy under GSPO's "
            "tight clip: watch actor/pg_clipfrac)"]
        return out + [w for w in lay.verdict.problems if not w.startswith("async")]


def host_profile(preset: Preset) -> str | None:
    """The profile a preset without `cluster.profile` gets: `cpu` when its device is the host CPU (config/devices.py);
    an accelerator's profile names the chip, so there is no default for one."""
    from gspo_cli.config import devices

    return None if devices.of(preset).accelerator else profiles.CPU


def pick_profile(preset: Preset, name: str | None) -> profiles.Profile:
    """--profile, else the preset's cluster.profile, else `cpu` for CPU presets; an error when none is known."""
    chosen = name or preset.cluster.profile or host_profile(preset)
    prof = profiles.get(chosen)
    if prof is None:
        known = ", ".join(profiles.names())
        raise ConfigError(f"no device profile {chosen!r} for the step-time model" if chosen else
                          f"preset {preset.name} names no cluster.profile", f"pass --profile ({known})")
    return prof


def reshape(preset: Preset, nodes: int | None = None, devices: int | None = None, profile: str | None = None
            ) -> Preset:
    """The preset on another cluster shape / profile (everything else as given)."""
    update = {k: v for k, v in (("nnodes", nodes), ("devices_per_node", devices)) if v}
    if update:
        preset = preset.model_copy(update={"cluster": preset.cluster.model_copy(update=update)})
    return memory.with_profile(preset, profile)


def predict(preset: Preset, prof: profiles.Profile, facts: ModelFacts | None = None, lengths: Lengths | None = None,
            *, preflight: Preflight) -> tuple[Workload, step_model.Prediction, memory.Verdict]:
    """(workload, prediction, `preflight`'s verdict) of the preset as given."""
    facts = facts if facts is not None else memory.facts(preset)
    if facts is None:
        raise ConfigError(f"model {preset.model.path!r}: no config.json and not a known Qwen3 size",
                          "point model.path at a local HF folder so its shape can be read")
    verdict = memory.verdict(preset, facts, preflight)
    work = from_preset(preset, facts, kv_capacity_tokens=verdict.kv_capacity_tokens, lengths=lengths)
    return work, step_model.predict(work, prof), verdict


def plan(preset: Preset, *, preflight: Preflight, profile: str | None = None, nodes: int | None = None, devices: int | None = None,
         search: bool = True, lengths: Lengths | None = None, top: int = 10, ref: str | None = None,
         sets: list[str] | None = None) -> PlanResult:
    """The prediction, and with `search` the layouts and the recommendation, whose next command trains `ref` (the
    preset as named; default its name) with `sets` (the user's --set), the reshape and the best's --sets; every
    verdict is `preflight`'s (the engine's checks, handed down by the CLI)."""
    preset = reshape(preset, nodes, devices, profile)
    shape = [f"cluster.{k}={v}" for k, v in (("nnodes", nodes), ("devices_per_node", devices),
                                              ("profile", profile and preset.cluster.profile)) if v]
    prof = pick_profile(preset, profile)
    facts = memory.facts(preset)
    work, pred, verdict = predict(preset, prof, facts, lengths, preflight=preflight)
    result = PlanResult(preset, prof, work, pred, verdict)
    if search:
        t = time.perf_counter()
        # not None here: predict raised ConfigError on a model without facts
        result.search = layouts.search(preset, facts, prof, lengths, top,  # type: ignore[arg-type]
                                       preflight=preflight)
        result.search_s = time.perf_counter() - t
        result.recommendation = recommend.recommend([*result.search.layouts, *result.search.modes], preset,
                                                    ref or preset.name, prof.name, [*(sets or []), *shape],
                                                    verdict.problems)
    return result


def write_preset(result: PlanResult, base_ref: str, dest: str) -> Path:
    """Save the best layout as a preset that extends the planned one; load it back to prove it is valid."""
    import yaml

    from gspo_cli.config import presets
    from gspo_cli.fsutil import atomic_write_text

    if not result.search or not result.search.layouts:
        raise ConfigError("no layout passed preflight, nothing to write", "see the rejected counts above")
    best = result.search.layouts[0]
    path = Path(dest).expanduser()
    data: dict = {"extends": base_ref, "name": path.stem,
                  "description": f"{result.preset.name} with the fastest layout `gspo plan` found "
                                 f"({best.prediction.tokens_per_device_per_s:.1f} tokens/device/s predicted)"}
    c = result.preset.cluster
    data["cluster"] = {"nnodes": c.nnodes, "devices_per_node": c.devices_per_node, "profile": c.profile}
    for key, value in best.changes.items():
        section, name = key.split(".", 1)
        data.setdefault(section, {})[name] = value
    text = f"# Written by `gspo plan --write-preset`: --set {' '.join(best.sets)}\n" + yaml.safe_dump(
        data, sort_keys=False)
    atomic_write_text(path, text)
    try:
        presets.load(str(path))
    except ConfigError:
        path.unlink(missing_ok=True)
        raise
    return path


def _modelled(preset: Preset) -> tuple[profiles.Profile | None, ModelFacts | None, str]:
    """(profile, model facts, why the step is not predicted: "" when it is) of the preset as given."""
    prof = profiles.get(preset.cluster.profile or host_profile(preset) or "")
    facts = memory.facts(preset)
    if prof is None or facts is None:
        return prof, facts, "unknown (set cluster.profile and a model with a known shape; see `gspo plan`)"
    from gspo_cli.config.engine_registry import engine_of

    unmeasured = engine_of(preset).planner.unmeasured(prof)
    return prof, facts, f"not predicted: {unmeasured}" if unmeasured else ""


def run_cost(preset: Preset, steps: int | None = None, *, preflight: Preflight) -> str:
    """What `steps` steps (default the preset's) of the preset cost by the step-time model: `15 steps x ~2,585 s
    predicted (a3 profile) = ~10h46m on 64 NPU`, or the steps and why their time is not predicted."""
    steps, unknown = (steps, "") if steps else run_time.steps_of(preset)
    if not steps:
        return f"steps not known: {unknown}"
    prof, facts, why = _modelled(preset)
    if why or prof is None or facts is None:
        return f"{steps} steps; their time: {why}"
    _, pred, _ = predict(preset, prof, facts, preflight=preflight)
    return run_time.of(steps, pred.step_s, preset, prof.name).describe()


def dry_run_line(preset: Preset, report: Report | None = None) -> str:
    """One line for `gspo train --dry-run`: the predicted step of the preset as given, or why there is none."""
    prof, facts, why = _modelled(preset)
    if why or prof is None or facts is None:
        return f"Predicted step: {why}" if prof is None or facts is None else f"Predicted step ({prof.name}): {why}"
    kv = ((report.estimates.get("memory") or {}).get("kv_cache_tokens") if report is not None else None)
    pred = step_model.predict(from_preset(preset, facts, kv_capacity_tokens=kv), prof)
    phases = ", ".join(f"{k} {v:.0f}" if v >= 10 else f"{k} {v:.2g}" for k, v in pred.phases.items() if v > 0)
    step = f"{pred.step_s:,.0f}" if pred.step_s >= 10 else f"{pred.step_s:.2g}"  # never "0 s"
    return (f"Predicted step ({prof.name}, assumed lengths): {step} s = {phases}; "
            f"{pred.tokens_per_device_per_s:.0f} tokens/device/s; bottleneck {pred.bottleneck} (`gspo plan` for more)")

"""The run-health rules over the metric stream (verl's metric names): each a pure function
`(history, settings, context) -> Violation | None` that judges the NEWEST step of `history` (a list of
`(step, data)` pairs in step order, as metrics.jsonl holds them), registered in `RULES`. No I/O. The monitor that
runs them, and the health.jsonl events, are metrics/health.py's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gspo_cli.algo.losses import OPEN_CLIP_BAND, POLICY_LOSSES
from gspo_cli.metrics import bands, gap_rules
from gspo_cli.registry import Registry

History = list[tuple[int, dict[str, Any]]]

LOSS = "actor/pg_loss"
GRAD_NORM = "actor/grad_norm"
ENTROPY = "actor/entropy"
CLIPFRAC = "actor/pg_clipfrac"
TRUNCATION = "response_length/clip_ratio"
RESPONSE_LENGTH = "response_length/mean"
ROLLOUT_GAP = "training/rollout_probs_diff_mean"  # verl/utils/debug/metrics.py: mean |p_train - p_rollout|
REWARD = "critic/score/mean"
REWARD_MAX, REWARD_MIN = "critic/score/max", "critic/score/min"
THROUGHPUT = "perf/throughput"
REWARD_ERRORS, REWARD_TIMEOUTS, REWARD_SCORED = "reward/errors", "reward/timeouts", "reward/scored"
ROUTING_FLIP = "moe/routing_flip_frac"  # engines/native/routing_probe.py; algo/routing.py defines it
# Rules that judge every step from the first: a NaN or a broken reward is never part of warming up.
# `no_signal_yet` is about the first steps themselves.
NO_WARMUP = ("nonfinite", "reward_errors", "reward_error_rate", "no_signal_yet")

@dataclass(frozen=True)
class Context:
    """What the rules need to know about the run beyond its metrics."""

    loss_mode: str = "gspo"
    off_policy: bool = False  # more than one policy update per step (ppo_epochs > 1 or several mini-batches)
    rollout: str = "vllm"  # rollout.name, "" in an async trainer.mode (gen_share: vLLM's levers, sync steps)
    preset: str = "PRESET"
    warmup_steps: int = 0  # trainer.health.warmup_steps (the Monitor sets it): early baselines start after it

    @classmethod
    def from_preset(cls, preset) -> Context:
        updates = preset.actor.ppo_epochs * (preset.data.train_batch_size // preset.actor.ppo_mini_batch_size)
        sync = preset.trainer.mode == "sync"
        return cls(preset.algorithm.loss_mode, updates > 1, preset.rollout.name if sync else "", preset.name)


@dataclass(frozen=True)
class Violation:
    value: float | None
    threshold: float | str | None
    message: str


# ---------------------------------------------------------------- helpers


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def values(history: History, key: str) -> list[float]:
    """The finite values of `key` in step order (steps without it, or with null, are skipped)."""
    return [float(data[key]) for _, data in history if _finite(data.get(key))]


def _newest(history: History, key: str) -> float | None:
    value = history[-1][1].get(key) if history else None
    return float(value) if _finite(value) else None


# ---------------------------------------------------------------- the rules

# A rule: (history, its settings `trainer.health.<name>`, context) -> a Violation or None. Registered with
# `@health_rule(NAME)` (the registry pattern of gspo_cli/registry.py); NAME is also its settings section in
# config/health.py (tests/test_registries.py checks the two agree). The monitor runs them in this order.
Rule = Callable[[History, Any, "Context"], "Violation | None"]
RULES: Registry[Rule] = Registry("health rule")


def health_rule(name: str) -> Callable[[Rule], Rule]:
    return RULES.register(name)


@health_rule("nonfinite")
def nonfinite(history: History, cfg, ctx: Context) -> Violation | None:
    data = history[-1][1]
    for key in (LOSS, GRAD_NORM):
        if key in data and not _finite(data[key]):
            return Violation(None, "finite", f"{key} is {data[key] if data[key] is not None else 'NaN/inf'}")
    return None


@health_rule("grad_norm_spike")
def grad_norm_spike(history: History, cfg, ctx: Context) -> Violation | None:
    current = _newest(history, GRAD_NORM)
    earlier = values(history[:-1], GRAD_NORM)[-cfg.window:]
    if current is None or len(earlier) < cfg.min_history:
        return None
    limit = cfg.factor * statistics.median(earlier)
    if limit > 0 and current > limit:
        return Violation(current, limit, f"grad norm {current:.4g} > {cfg.factor:g} x median of the last "
                                         f"{len(earlier)} steps ({limit:.4g})")
    return None


@health_rule("entropy_collapse")
def entropy_collapse(history: History, cfg, ctx: Context) -> Violation | None:
    current = _newest(history, ENTROPY)
    if current is None:
        return None
    if current < cfg.floor:
        return Violation(current, cfg.floor, f"entropy {current:.4g} below the floor {cfg.floor:g}: the group's "
                                             "samples are near-identical" + _band_tail("entropy_collapse"))
    series = values(history, ENTROPY)
    if len(series) < cfg.window + cfg.smooth:
        return None
    recent = statistics.fmean(series[-cfg.smooth:])
    before = statistics.fmean(series[-cfg.window - cfg.smooth:-cfg.window])
    limit = (1 - cfg.max_drop) * before
    if recent < limit:
        return Violation(recent, limit, f"entropy fell {1 - recent / before:.0%} in {cfg.window} steps "
                                        f"({before:.4g} -> {recent:.4g})" + _band_tail("entropy_collapse"))
    return None


def _loss_band(ctx: Context) -> tuple[tuple[float, float], bool]:
    """(clip band, cited) of the run's loss (its algo/losses.py entry); an unregistered name: an open band."""
    loss = POLICY_LOSSES.get(ctx.loss_mode)
    return (loss.clip_band, loss.clip_band_cited) if loss else (OPEN_CLIP_BAND, False)


def clip_band(cfg, ctx: Context) -> tuple[float, float]:
    """The (low, high) clip-fraction band for this run: the preset's, else the loss mode's default; the lower
    bound is 0 for a fully on-policy step (ratio 1, nothing to clip)."""
    default_low, default_high = _loss_band(ctx)[0]
    low = cfg.low if cfg.low is not None else default_low
    high = cfg.high if cfg.high is not None else default_high
    return (low if ctx.off_policy else 0.0), high


@health_rule("clip_fraction")
def clip_fraction(history: History, cfg, ctx: Context) -> Violation | None:
    current = _newest(history, CLIPFRAC)
    if current is None:
        return None
    low, high = clip_band(cfg, ctx)
    if current > high:
        return Violation(current, high, f"clip fraction {current:.4g} above {high:g} ({ctx.loss_mode}): "
                                        "updates run far off-policy (too many mini-batches, or lr too high)"
                                        + _band_tail("clip_fraction", ctx))
    if current < low:
        return Violation(current, low, f"clip fraction {current:.4g} below {low:g} ({ctx.loss_mode}): the clip "
                                       "range is too wide for this loss mode's ratio" + _band_tail("clip_fraction", ctx))
    return None


def _band_tail(name: str, ctx: Context | None = None) -> str:
    """"; check: ...; source: ..." of a GSPO band (metrics/bands.py); nothing for a non-GSPO clip band."""
    if name == "clip_fraction" and ctx is not None and not _loss_band(ctx)[1]:
        return ""
    band = bands.BANDS[name]
    return f"; check: {band.check} ({band.cite()})"


def early_baseline(history: History, key: str, ctx: Context, steps: int) -> float | None:
    """Median of `key` over its first `steps` values after warm-up, None until that many exist (before the newest)."""
    early = [float(d[key]) for s, d in history[:-1] if s > ctx.warmup_steps and _finite(d.get(key))][:steps]
    return statistics.median(early) if len(early) >= steps else None


@health_rule("truncation")
def truncation(history: History, cfg, ctx: Context) -> Violation | None:
    current = _newest(history, TRUNCATION)
    if current is not None and current > cfg.max_ratio:
        return Violation(current, cfg.max_ratio, f"{current:.0%} of responses hit max_response_length")
    return None


@health_rule("rollout_gap")
def rollout_gap(history: History, cfg, ctx: Context) -> Violation | None:
    """The train/rollout probability gap above its absolute band (bands.ROLLOUT_GAP: verl's nightly GSPO baselines
    hold 0.0045-0.0056); `mismatch` judges its growth against the run's own start."""
    current = _newest(history, ROLLOUT_GAP)
    if current is None or current <= cfg.high:
        return None
    return Violation(current, cfg.high, f"{ROLLOUT_GAP} {current:.3g} above {cfg.high:g}: verl's nightly GSPO runs "
                                        "hold 0.0045-0.0056 (a healthy bf16 stack: a few 1e-3); rollout and trainer "
                                        "disagree on the tokens' probabilities" + _band_tail("rollout_gap"))


@health_rule("entropy_rising")
def entropy_rising(history: History, cfg, ctx: Context) -> Violation | None:
    """Entropy above `high` and above `rise` x its early level (bands.ENTROPY_CEILING)."""
    current = _newest(history, ENTROPY)
    base = early_baseline(history, ENTROPY, ctx, cfg.baseline_steps)
    if current is None or base is None or current <= cfg.high or current <= cfg.rise * base:
        return None
    return Violation(current, max(cfg.high, cfg.rise * base), (
        f"entropy {current:.3g} rose above {cfg.high:g} and {current / base:.1f}x its early level {base:.3g}: the "
        "policy drifts toward noise (rllm#116: fine below 1; a run that climbed to 2.0 lost accuracy)"
        + _band_tail("entropy_rising")))


@health_rule("response_shrink")
def response_shrink(history: History, cfg, ctx: Context) -> Violation | None:
    """response_length/mean below `min_ratio` x its early level (bands.RESPONSE_SHRINK)."""
    current = _newest(history, RESPONSE_LENGTH)
    base = early_baseline(history, RESPONSE_LENGTH, ctx, cfg.baseline_steps)
    if current is None or not base or current >= cfg.min_ratio * base:
        return None
    return Violation(current, cfg.min_ratio * base, (
        f"mean response length {current:.4g} fell to {current / base:.0%} of its early level {base:.4g}: healthy "
        "math RL runs lengthen their responses; shrinking ones give up reasoning (shorter guesses, or a collapse)"
        + _band_tail("response_shrink")))


@health_rule("reward_flat")
def reward_flat(history: History, cfg, ctx: Context) -> Violation | None:
    if _newest(history, REWARD) is None:
        return None
    series = values(history, REWARD)[-cfg.window:]
    if len(series) < cfg.window:
        return None
    spread = max(series) - min(series)
    if spread < cfg.tolerance:
        return Violation(spread, cfg.tolerance, f"reward flat at {series[-1]:.4g} for {cfg.window} steps "
                                                f"(range {spread:.3g})")
    return None


@health_rule("no_signal_yet")
def no_signal_yet(history: History, cfg, ctx: Context) -> Violation | None:
    """Early in a run, every sample of the step scored the same non-positive reward (critic/score/max == min,
    e.g. all -1): no sample found an answer, so every GRPO/GSPO advantage is 0 and the step has no gradient
    (actor/grad_norm 0). A working run looks broken then; the note says why and what to try."""
    step, data = history[-1]
    if step > cfg.until_step:
        return None
    top, bottom, mean = (data.get(k) for k in (REWARD_MAX, REWARD_MIN, REWARD))
    if not (_finite(top) and _finite(bottom) and _finite(mean)) or top - bottom > cfg.tolerance or mean > 0:
        return None
    return Violation(float(mean), None,
                     f"every sample scored {mean:.3g}: no sample has found an answer yet, so "
                     "every GRPO/GSPO advantage is 0 and the update has no gradient (grad_norm 0). This is where a "
                     "cold start begins, not a broken run; to get a learning signal sooner try a warmer start "
                     "model (one that sometimes answers), easier data, more samples per prompt (rollout.n) or a "
                     "longer data.max_response_length")


def validation_accuracy(data: dict[str, Any]) -> float | None:
    """Mean of the val-core accuracy metrics of one step (verl: val-core/<source>/acc/mean@N), None if absent."""
    accs = [float(v) for k, v in data.items() if k.startswith("val-core/") and "/acc/" in k and _finite(v)]
    return statistics.fmean(accs) if accs else None


@health_rule("val_drop")
def val_drop(history: History, cfg, ctx: Context) -> Violation | None:
    current = validation_accuracy(history[-1][1])
    if current is None:
        return None
    earlier = [a for _, data in history[:-1] if (a := validation_accuracy(data)) is not None]
    if not earlier:
        return None
    best = max(earlier)
    if best - current > cfg.max_drop:
        return Violation(current, best - cfg.max_drop, f"validation accuracy {current:.3g} is {best - current:.3g} "
                                                       f"below its best {best:.3g}")
    return None


@health_rule("throughput")
def throughput(history: History, cfg, ctx: Context) -> Violation | None:
    if _newest(history, THROUGHPUT) is None:
        return None
    series = values(history, THROUGHPUT)
    smooth = cfg.smooth  # one slow step (a save, a busy host) is not a trend
    earlier = series[:-smooth][-cfg.window:]
    if len(earlier) < cfg.min_history:
        return None
    recent = statistics.median(series[-smooth:])
    baseline = statistics.median(earlier)
    limit = (1 - cfg.max_drop) * baseline
    if recent < limit:
        return Violation(recent, limit, f"throughput {recent:.4g} tokens/s is {1 - recent / baseline:.0%} below "
                                        f"its running median {baseline:.4g}")
    return None


def _reward_failures(data: dict[str, Any]) -> tuple[float, float, float] | None:
    """(errors, timeouts, scored) of one step, or None when the step has no reward counts."""
    if not _finite(data.get(REWARD_ERRORS)) and not _finite(data.get(REWARD_TIMEOUTS)):
        return None
    errors = float(data.get(REWARD_ERRORS) or 0) if _finite(data.get(REWARD_ERRORS)) else 0.0
    timeouts = float(data.get(REWARD_TIMEOUTS) or 0) if _finite(data.get(REWARD_TIMEOUTS)) else 0.0
    scored = float(data[REWARD_SCORED]) if _finite(data.get(REWARD_SCORED)) else 0.0
    return errors, timeouts, scored


@health_rule("reward_errors")
def reward_errors(history: History, cfg, ctx: Context) -> Violation | None:
    counts = _reward_failures(history[-1][1])
    if counts is None or counts[0] + counts[1] == 0:
        return None
    errors, timeouts, scored = counts
    return Violation(errors + timeouts, 0, f"the verifier failed on {errors:g} response(s) and timed out on "
                                           f"{timeouts:g} of {scored:g} (scored wrong; see the first error in the log)")


@health_rule("reward_error_rate")
def reward_error_rate(history: History, cfg, ctx: Context) -> Violation | None:
    counts = _reward_failures(history[-1][1])
    if counts is None or counts[2] <= 0:
        return None
    rate = (counts[0] + counts[1]) / counts[2]
    if rate > cfg.max_rate:
        return Violation(rate, cfg.max_rate, f"{rate:.0%} of this step's responses could not be scored "
                                             f"(errors {counts[0]:g}, time-outs {counts[1]:g}): the reward is broken")
    return None


@health_rule("mismatch")
def mismatch(history: History, cfg, ctx: Context) -> Violation | None:  # [run-mismatch-growing]
    return Violation(*hit) if (hit := gap_rules.mismatch(history, cfg)) else None


@health_rule("gen_share")
def gen_share(history: History, cfg, ctx: Context) -> Violation | None:  # [run-rollout-long-tail]
    return Violation(*hit) if (hit := gap_rules.gen_share(history, cfg, ctx.rollout, ctx.preset)) else None


@health_rule("routing_volatility")
def routing_volatility(history: History, cfg, ctx: Context) -> Violation | None:  # [run-moe-routing-volatile]
    current = _newest(history, ROUTING_FLIP)
    if current is None or current <= cfg.max_flip:
        return None
    advice = ("GSPO's sequence ratio tolerates some of this (the paper: ~0.10 on Qwen3-30B-A3B); token-level "
              "clipping on an MoE needs routing replay" if ctx.loss_mode == "vanilla" else
              "lower the lr or the mini-batches per step")
    return Violation(current, cfg.max_flip, f"{current:.0%} of the experts the rollout policy chose are no longer "
                                            f"chosen by the policy being trained (above {cfg.max_flip:g}; the GSPO "
                                            f"paper measures ~0.10 on Qwen3-30B-A3B): the routing moves faster than "
                                            f"the clip can see; {advice} [run-moe-routing-volatile]")

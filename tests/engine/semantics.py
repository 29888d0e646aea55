"""The semantic checks of a GSPO run, read from its metrics (verl's names; both engines write them), and the
thresholds they use. Each check is a plain function of the metrics, so the engine tests apply the same function to
the run under test and to a control that must fail it (the check bites).

Thresholds, and why (figures in docs/benchmarks.md "tiny-verl learns"):
- SYNC_TOL: `training/rollout_probs_diff_max` is verl's max over response tokens of |p_actor - p_rollout|
  (probabilities, not log-probs; verl/utils/debug/metrics.py). In float32 end to end (vLLM on float32, FSDP with
  fp32 mixed precision) with the weights synced, it measured 3e-7..7.5e-7 per step (fp32 epsilon is 1.2e-7; the
  two stacks sum in different orders). With the sync switched off it measured 0.14..0.31 from the step after the
  first update. 1e-4 sits 130x above the first and 1400x below the second.
- LEARN_MARGIN / the native band: see `learned` and `band` below.
"""

from __future__ import annotations

import statistics

SYNC_TOL = 1e-4
SCORE = "critic/score/mean"
VAL = "val-core/arith/acc/mean@1"


def series(records: list[dict], key: str) -> dict[int, float]:
    """step -> value of `key`, for the steps that have it."""
    return {r["step"]: r["data"][key] for r in records if key in r["data"]}


def train_steps(records: list[dict]) -> list[int]:
    return sorted(series(records, SCORE))


def gradient_failures(records: list[dict]) -> list[str]:
    """Steps where no gradient reached the weights: `actor/grad_norm` 0 (or missing) or `actor/pg_loss` exactly 0."""
    grad, loss = series(records, "actor/grad_norm"), series(records, "actor/pg_loss")
    return [f"step {s}: grad_norm {grad.get(s)}, pg_loss {loss.get(s)}" for s in train_steps(records)
            if not grad.get(s, 0) > 0 or loss.get(s, 0) == 0]


def clip_steps(records: list[dict]) -> list[int]:
    """Steps on which GSPO's sequence-level clip was active (`actor/pg_clipfrac` > 0)."""
    return [s for s, v in sorted(series(records, "actor/pg_clipfrac").items()) if v > 0]


def sync_checked(records: list[dict]) -> list[int]:
    """The steps the sync check applies to: every step after an update with a gradient (an update without one, e.g.
    every sample rejected by the rollout correction, moves no weight)."""
    grad = series(records, "actor/grad_norm")
    return [s for s in train_steps(records)[1:] if grad.get(s - 1, 0) > 0]


def sync_failures(records: list[dict], tol: float = SYNC_TOL) -> list[str]:
    """Steps whose rollout (vLLM's log-probs) was generated with other weights than the FSDP actor's that scored
    it: every step after an update with a gradient must have rollout_probs_diff_max <= tol."""
    diff = series(records, "training/rollout_probs_diff_max")
    checked = sync_checked(records)
    missing = [f"step {s}: no training/rollout_probs_diff_max" for s in checked if s not in diff]
    return missing + [f"step {s}: {diff[s]:.3g} > {tol:g}" for s in checked if s in diff and not diff[s] <= tol]


def blocks(records: list[dict], size: int = 4) -> list[float]:
    """Mean reward per block of `size` consecutive steps."""
    scores = [series(records, SCORE)[s] for s in train_steps(records)]
    return [statistics.fmean(scores[i:i + size]) for i in range(0, len(scores) - size + 1, size)]


def rise(records: list[dict], size: int = 4) -> float:
    """Mean reward of the last `size` steps minus that of the first `size`."""
    b = blocks(records, size)
    return b[-1] - b[0]


def band(curves: list[list[float]], floor: float) -> list[tuple[float, float]]:
    """Per block: the mean of the reference runs' block means and the half-width of the band a run of the same
    distribution falls in: 3 standard deviations of one run (the larger of the seeds' sd and `floor`, the sd
    measured over many seeds, so a few seeds that happen to agree cannot narrow the band)."""
    out = []
    for values in zip(*curves, strict=False):
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        out.append((statistics.fmean(values), 3 * max(sd, floor)))
    return out


def outside(curve: list[float], ref: list[tuple[float, float]]) -> list[str]:
    return [f"block {i + 1}: {v:+.3f} outside {m:+.3f} +- {w:.3f}" for i, (v, (m, w)) in enumerate(zip(curve, ref, strict=False))
            if abs(v - m) > w]

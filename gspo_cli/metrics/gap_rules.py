"""Two run-health rules that recognise failure signatures of verl + vLLM runs (gspo_cli/signatures.py), pure:
`mismatch` (the train/rollout log-prob gap growing over its early baseline, run-mismatch-growing) and
`gen_share` (generation's share of the step, run-rollout-long-tail). `metrics.health` wraps them into its
rules; each returns (value, threshold, message) or None for the newest step of `history` ((step, data) pairs).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from gspo_cli.shell import quote

MISMATCH_MEAN = "training/rollout_probs_diff_mean"  # verl/utils/debug/metrics.py (calculate_debug_metrics)
MISMATCH_MAX = "training/rollout_probs_diff_max"
GEN_TIME = "timing_s/gen"
STEP_TIME = "timing_s/step"
Hit = tuple[float, float, str]


def _value(data: dict[str, Any], key: str) -> float | None:
    v = data.get(key)
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


def mismatch(history: list[tuple[int, dict[str, Any]]], cfg) -> Hit | None:
    """The gap above `factor` (mean) / `max_factor` (max) x the median of its first `baseline_steps` values."""
    for key, factor in ((MISMATCH_MEAN, cfg.factor), (MISMATCH_MAX, cfg.max_factor)):
        current = _value(history[-1][1], key) if history else None
        series = [v for _, d in history[:-1] if (v := _value(d, key)) is not None]
        if current is None or len(series) < cfg.baseline_steps:
            continue
        baseline = statistics.median(series[:cfg.baseline_steps])
        limit = max(factor * baseline, cfg.floor)
        if current > limit:
            times = f"{current / baseline:.1f}x its early baseline {baseline:.3g}" if baseline > 0 else f"above {limit:.3g}"
            return current, limit, (f"{key} {current:.3g} is {times}: the train/rollout log-prob gap is growing (it "
                                    "precedes collapses, vime#64); check rollout/trainer numerics (dtype, graph "
                                    "mode), lower the lr [run-mismatch-growing]")
    return None


def gen_share(history: list[tuple[int, dict[str, Any]]], cfg, rollout: str, preset: str) -> Hit | None:
    """timing_s/gen / timing_s/step above `max_share`, with the vLLM rollout (its levers are vLLM's)."""
    data = history[-1][1] if history else {}
    gen, step = _value(data, GEN_TIME), _value(data, STEP_TIME)
    if rollout != "vllm" or gen is None or not step:
        return None
    share = gen / step
    if share <= cfg.max_share:
        return None
    return share, cfg.max_share, (f"generation takes {share:.0%} of the step ({gen:.1f}s of {step:.1f}s): the "
                                  f"rollout's long tail dominates (verl#6747); run `gspo plan --preset {quote(preset)}` and "
                                  "see trainer.mode colocate_async (the step stops waiting for its longest response), "
                                  "rollout.max_num_seqs, tensor_parallel_size, gpu_memory_utilization, cudagraph mode, "
                                  "max_response_length [run-rollout-long-tail]")

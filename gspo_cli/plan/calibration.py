"""Measured points the step-time model is calibrated against, each with its source, and the fit.

A point is a workload, a profile, the quantity measured (a phase's seconds, the step's seconds, or tokens per
device per second) and the measured value. `fit` points set the profile factors (see `fit_factors`); `held-out`
points are never used by the fit and report the model's honest error. Response lengths of published runs are
not published: each point states the length assumption it uses (the largest source of error).

Points from other frameworks (MindSpeed-RL runs Megatron training, not FSDP) are modelled as verl-like steps on
the same hardware; the fitted factors therefore absorb framework differences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gspo_cli.plan import model as step_model
from gspo_cli.plan.workload import Lengths, ModelShape, Workload
from gspo_cli.sizing.profiles import BUILTIN, Profile

MINDSPEED_DAPO = "https://github.com/Ascend/MindSpeed-RL docs/algorithms/dapo.md (性能数据 table)"
CANN_RECIPES = "https://github.com/hicann/cann-recipes-train llm_rl/qwen3/README.md (Qwen3-32B 首步推理时间)"
ISSUE_17 = "gspo issue #17 (H200 native-engine measurement quoted in the issue text)"
VERL_6747 = "https://github.com/verl-project/verl/issues/6747 (timing_s at step 94)"
FULLY_ASYNC = ("verl docs/advance/fully_async.md (H20 tables: colocate sync vs fully_async_policy; setups from "
               "recipe/fully_async_policy/exp/qwen2-7B-math_*/: sync offload=True, async actor_offload=False, "
               "fsdp_size=2, SP 4, TP 4)")
HERE = "measured here: GSPO_HOME=/tmp/plan_home gspo train --preset tiny --local (2 shared CPU cores, noisy)"


def dense_shape(name: str, hidden: int, layers: int, heads: int, kv_heads: int, inter: int, vocab: int, tied: bool,
                head_dim: int = 128) -> ModelShape:
    attn = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    per_layer = attn + 3 * hidden * inter + 2 * hidden
    params = layers * per_layer + vocab * hidden * (1 if tied else 2) + hidden
    return ModelShape(name, params, layers, hidden, heads, kv_heads, head_dim, vocab, tied)


QWEN3_32B = dense_shape("Qwen3-32B", 5120, 64, 64, 8, 25600, 151936, False)
QWEN25_32B = dense_shape("Qwen2.5-32B", 5120, 64, 40, 8, 27648, 152064, False)
QWEN3_06B = dense_shape("Qwen3-0.6B", 1024, 28, 16, 8, 3072, 151936, True)
QWEN25_05B = dense_shape("Qwen2.5-0.5B", 896, 24, 14, 2, 4864, 151936, True, head_dim=64)
QWEN25_MATH_7B = dense_shape("Qwen2.5-Math-7B", 3584, 28, 28, 4, 18944, 152064, False)
TINY = dense_shape("tiny", 64, 2, 4, 2, 256, 37, True, head_dim=16)


@dataclass(frozen=True)
class Point:
    id: str
    what: str
    source: str
    profile: str
    workload: Workload
    quantity: str  # a phase name (seconds), "step_s", "tokens_per_device_per_s" or "speedup_vs_sync"
    measured: float
    role: str  # fit | held-out
    note: str = ""
    baseline: Workload | None = None  # speedup_vs_sync: the sync run it is compared with (default: this one, sync)


def _msrl(ident, shape, profile, nodes, per_node, tp, util, max_resp, batched, tps, role, lengths, note=""):
    w = Workload(shape, nodes, per_node, "verl", "vllm", 256, 16, 2048, max_resp, lengths, tp=tp,
                 gpu_memory_utilization=util, max_num_seqs=1024, max_num_batched_tokens=batched,
                 enforce_eager=True, param_offload=True, optimizer_offload=True, micro_tokens=max_resp + 2048,
                 mini_batches=8)
    return Point(ident, f"MindSpeed-RL DAPO {shape.name}, {nodes * per_node} x {profile.upper()}, GBS 256 n 16, "
                 f"2K/{max_resp // 1024}K", MINDSPEED_DAPO, profile, w, "tokens_per_device_per_s", tps, role, note)


def _a2_points() -> list[Point]:
    w = Workload(QWEN25_05B, 1, 1, "verl", "vllm", 16, 1, 256, 1024, Lengths(0.4, 0.3, 0.02,
                 "assumption: GSM8K prompts ~100 tokens, Qwen2.5-0.5B-Instruct answers ~300, the longest of 16 at the "
                 "1024 limit"), gpu_memory_utilization=0.3, enforce_eager=True)
    return [Point("verl6747-a2-gen", "verl 0.7.1 GRPO Qwen2.5-0.5B, 1 x 910B, 16 prompts n 1, 256/1K", VERL_6747, "a2",
                  w, "gen", 31.27, "fit", "eager assumed (vllm-ascend graph mode not on by default there)")]


def _async_points() -> list[Point]:
    """verl's fully_async H20 runs: the colocated sync step's phases and the async speedup, held out.

    Setups from the recipe's scripts (recipe/fully_async_policy/exp/qwen2-7B-math_*/): both sides FSDP2 with
    fsdp_size=2 (HSDP), Ulysses SP 4, rollout TP 4, dynamic batches of 2 x 30K tokens per GPU, 16 mini-batches of
    32 prompts; the colocated sync runs offload actor params and optimizer (offload=True), the fully_async trainer
    does not (actor_offload=False) and takes old log-probs from the rollout (no recompute)."""
    lengths = Lengths(0.05, 2048 / 28672, 0.005, "assumption: Qwen2.5-Math-7B DAPO responses ~2K of 28K early on")
    out = []
    # (cards, sync step, gen, old_log_prob, update_actor, fully_async step) from the docs' H20 table; the async
    # row's own update_actor (269.80 / 156.98 / 113.16 s on the training half) is not used
    for cards, sync_s, gen, old, update, async_s in ((32, 790.10, 357.41, 107.71, 313.81, 294.77),
                                                      (64, 365.28, 150.72, 70.26, 133.41, 189.26),
                                                      (128, 356.30, 177.85, 53.92, 113.81, 150.63)):
        w = Workload(QWEN25_MATH_7B, cards // 8, 8, "verl", "vllm", 512, 16, 2048, 28672, lengths, tp=4, sp=4,
                     gpu_memory_utilization=0.8, micro_tokens=2 * 30720, mini_batches=16, test_freq=20,
                     fsdp_size=2, param_offload=True, optimizer_offload=True)
        what = f"verl DAPO Qwen2.5-Math-7B, {cards} x H20, 512 x n 16, 2K/28K"
        # the 32-card training phases fit verl's GPU training MFU; 64 and 128 cards, every gen and step, and the async
        # runs are held out
        out += [Point(f"fa-{cards}/{q}", what + ", colocate sync", FULLY_ASYNC, "h20", w, q, v,
                      "fit" if cards == 32 and q in ("old_log_prob", "update_actor") else "held-out")
                for q, v in (("gen", gen), ("old_log_prob", old), ("update_actor", update), ("step_s", sync_s))]
        split = replace(w, mode="separate_async", parameter_sync_step=4, old_log_prob=False, param_offload=False,
                        optimizer_offload=False)  # rollout log-probs; the trainer keeps its states on the GPU
        out.append(Point(f"fa-{cards}/async", what + f", fully_async {cards // 2}:{cards // 2} vs sync",
                         FULLY_ASYNC, "h20", split, "speedup_vs_sync", sync_s / async_s, "held-out",
                         "fully_async_policy (staleness 0.5, partial rollout) modelled as V1 separate_async, "
                         "against the colocated sync run (old log-probs recomputed, actor offloaded)", baseline=w))
    return out


def _tiny(ident, prompts, n, mini, micro, measured: dict, role) -> list[Point]:
    lengths = Lengths(12 / 32, measured.pop("response_mean") / 3, measured.pop("clip"), "measured in the run")
    w = Workload(TINY, 1, 1, "native", "hf", prompts, n, 32, 3, lengths, grad_ckpt=False, micro_seqs=micro,
                 mini_batches=prompts // mini, old_log_prob=prompts // mini > 1, weight_bytes=4)
    what = f"native tiny on this CPU, {prompts} prompts x n {n}, mini {mini}" + (f", micro {micro}" if micro else "")
    return [Point(f"{ident}/{q}", what, HERE, "cpu", w, q, v, role, "median over steps 3.. of the run")
            for q, v in measured.items()]


def points() -> list[Point]:
    q3_32b_2k = Workload(QWEN3_32B, 1, 16, "verl", "vllm", 32, 8, 2048, 2048, Lengths(0.1, 0.9, 0.6,
                         "assumption: Qwen3-32B thinking hits the 2K limit on most DAPO-Math prompts"), tp=8,
                         gpu_memory_utilization=0.6, max_num_seqs=1024, enforce_eager=True, param_offload=True,
                         optimizer_offload=True, micro_tokens=4096)
    first = Workload(QWEN3_32B, 2, 16, "verl", "vllm", 128, 16, 2048, 34816, Lengths(0.1, 0.35, 0.05,
                     "assumption: Qwen3-32B thinking, mean ~12K of 34K, 5% truncated"), tp=8,
                     gpu_memory_utilization=0.85, max_num_seqs=128, enforce_eager=True)
    base_lengths = Lengths(0.1, 0.1, 0.005, "assumption: Qwen2.5-32B base, responses ~3K early in DAPO training")
    h200 = Workload(QWEN3_06B, 1, 1, "native", "hf", 16, 8, 512, 512, Lengths(0.125, 1.0, 1.0,
                    "random init: every response runs to 512; prompt ~64 tokens assumed"), grad_ckpt=False,
                    old_log_prob=False)
    out = [
        Point("msrl-q3-32b-a3", "MindSpeed-RL DAPO Qwen3-32B, 16 x A3, GBS 32 n 8, 2K/2K", MINDSPEED_DAPO, "a3",
              q3_32b_2k, "tokens_per_device_per_s", 140.0, "fit",
              "dynamic sampling on: extra generation batches not modelled"),
        _msrl("msrl-q25-32b-a3", QWEN25_32B, "a3", 4, 16, 4, 0.8, 30720, 32768, 108.0, "held-out",
              replace(base_lengths, response_frac=3072 / 30720)),
        _msrl("msrl-q25-32b-a2", QWEN25_32B, "a2", 8, 8, 4, 0.8, 20480, 22528, 35.0, "held-out",
              replace(base_lengths, response_frac=3072 / 20480)),
        Point("cann-q3-32b-grpo", "cann-recipes-train GRPO Qwen3-32B first rollout, 32 A3 dies, GBS 128 n 16, 2K/34K",
              CANN_RECIPES, "a3", first, "gen", 2261.0, "fit", "verl 0.6 + vllm-ascend, eager, no SAM"),
        Point("cann-q3-32b-dapo", "cann-recipes-train DAPO Qwen3-32B first rollout, same shape", CANN_RECIPES, "a3",
              first, "gen", 2367.0, "held-out", "same shape as the GRPO point: not independent"),
        Point("h200-gen", "native Qwen3-0.6B shape, 1 x H200, 16 x n 8 x 512 tokens", ISSUE_17, "h200", h200, "gen",
              15.6, "fit"),
        Point("h200-update", "same run: update", ISSUE_17, "h200", h200, "update_actor", 2.5, "fit"),
    ]
    out += _a2_points() + _async_points()
    out += _tiny("tiny-a", 32, 16, 32, None, {"gen": 0.1905, "update_actor": 0.3161, "reward": 0.0122,
                                              "step_s": 0.5322, "response_mean": 1.19, "clip": 0.017}, "fit")
    out += _tiny("tiny-c", 128, 8, 32, 64, {"gen": 0.2733, "old_log_prob": 0.1597, "update_actor": 1.1947,
                                            "reward": 0.0146, "step_s": 1.6239, "response_mean": 1.375,
                                            "clip": 0.051}, "fit")
    out += _tiny("tiny-b", 64, 4, 16, None, {"gen": 0.0657, "old_log_prob": 0.0311, "update_actor": 0.1282,
                                             "reward": 0.0016, "step_s": 0.2215, "response_mean": 1.48,
                                             "clip": 0.088}, "held-out")
    # The same settings run again a few minutes later: the spread between tiny-b and tiny-b2 is this machine's noise.
    out += _tiny("tiny-b2", 64, 4, 16, None, {"gen": 0.1055, "old_log_prob": 0.0542, "update_actor": 0.2899,
                                              "reward": 0.0042, "step_s": 0.4833, "response_mean": 1.48,
                                              "clip": 0.088}, "held-out")
    return out


def predicted(point: Point, prof: Profile) -> float:
    pred = step_model.predict(point.workload, prof)
    if point.quantity == "step_s":
        return pred.step_s
    if point.quantity == "tokens_per_device_per_s":
        return pred.tokens_per_device_per_s
    if point.quantity == "speedup_vs_sync":  # the sync run (colocated) over this mode's step
        base = point.baseline or replace(point.workload, mode="sync")
        return step_model.predict(base, prof).step_s / pred.step_s
    return pred.phases[point.quantity]


def log_error(point: Point, prof: Profile) -> float:
    p = predicted(point, prof)
    return math.log(max(p, 1e-12) / point.measured)


# Which factors each built-in profile family fits, on which profiles' fit points.
# A family fits its factors on the fit points of its first profile and gives them to all its profiles; families
# are fitted in this order (a2 after ascend: A2 keeps A3's bandwidth and MFU and fits its own decode overhead).
FIT_PLAN = {
    "ascend": (("a3", "a2"), ("decode_bw_eff", "mfu_train")),
    "a2": (("a2",), ("vllm_layer_overhead_s",)),
    "gpu": (("h200", "h100", "h20"), ("hf_layer_overhead_s", "native_mfu_train")),
    "gpu-verl": (("h20", "h200", "h100"), ("mfu_train", "batch_move_s_per_token")),
    "cpu": (("cpu",), ("mfu_prefill", "native_mfu_train", "hf_layer_overhead_s", "train_layer_overhead_s",
                       "reward_s_per_response")),
}


# Where the fit starts (not the shipped values, so benchmarks/plan_fit.py reproduces the shipped factors): with
# more factors than independent measurements (the CPU family) the minimum is a valley, and the start picks the point.
FIT_START = {"decode_bw_eff": 0.6, "mfu_train": 0.3, "native_mfu_train": 0.3, "mfu_prefill": 0.4, "vllm_layer_overhead_s": 1e-4, "hf_layer_overhead_s": 1e-3,
             "train_layer_overhead_s": 1e-3, "reward_s_per_response": 1e-3, "step_fixed_s": 0.1, "batch_move_s_per_token": 1e-7}


def fit_factors(base: Profile, factors: tuple[str, ...], pts: list[Point], sweeps: int = 6,
                start: dict[str, float] | None = None) -> dict[str, float]:
    """Coordinate descent in log space minimising the squared log error of `pts` (pure, deterministic), from
    `start` (default: the profile's own values)."""
    values = {k: max((start or {}).get(k, getattr(base, k)), 1e-9) for k in factors}

    def loss(vals):
        prof = base.with_factors(**vals)
        return sum(log_error(p, prof) ** 2 for p in pts)

    for _ in range(sweeps):
        for k in factors:
            lo, hi = math.log(values[k]) - 4.0, math.log(values[k]) + 4.0
            for _ in range(40):  # golden-section search on log(value)
                a = hi - (hi - lo) * 0.618
                b = lo + (hi - lo) * 0.618
                if loss(values | {k: math.exp(a)}) < loss(values | {k: math.exp(b)}):
                    hi = b
                else:
                    lo = a
            values[k] = math.exp((lo + hi) / 2)
    return values


def table(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Every point with its prediction under `profiles` (default: the built-ins) and the error."""
    profiles = profiles or BUILTIN
    rows = []
    for p in points():
        pred = predicted(p, profiles[p.profile])
        rows.append({"point": p.id, "what": p.what, "source": p.source, "profile": p.profile,
                     "quantity": p.quantity, "predicted": pred, "measured": p.measured,
                     "error_pct": 100 * (pred - p.measured) / p.measured, "role": p.role,
                     "lengths": p.workload.lengths.source, "note": p.note})
    return rows

"""Hardware profiles: one registry entry per device profile (`cluster.profile`), carrying its hardware numbers (the
device memory preflight checks against, once) and the step-time model's efficiency factors, each with its source.

One profile = one rank as the framework sees it (an A3 die, a 910B card, a GPU, a CPU process). Asked by preflight's
memory checks (`memory_checked`: the device's memory and how its messages name it) and by the step-time planner
(plan/: `get`, `names`, the factors). Hardware numbers
are vendor or widely published figures; efficiency factors are what the model cannot derive from hardware
(achieved fraction of HBM bandwidth in decode, MFU of training matmuls, per-layer launch overheads) and are
fitted to the measured points in `gspo_cli.plan.calibration` (`python benchmarks/plan_fit.py` prints the fit).

User profiles saved by `gspo plan --calibrate RUN --save-profile NAME` live in `$GSPO_HOME/profiles/NAME.json`
and override the built-in factors of the profile they were derived from.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from gspo_cli.registry import Registry

GB = 1e9
TB = 1e12

FACTOR_FIELDS = ("decode_bw_eff", "mfu_prefill", "mfu_train", "native_mfu_train", "comm_eff", "vllm_layer_overhead_s",
                 "graph_overhead_factor", "hf_layer_overhead_s", "train_layer_overhead_s", "batch_move_s_per_token",
                 "step_fixed_s", "reward_s_per_response")


# The native engine's fixed cost per step: timing_s/step minus its timed phases (gen, reward, old_log_prob,
# update_actor), i.e. advantages, the LR scheduler and metric collection in one Python process. Measured with
# `gspo train --preset tiny --local` here (benchmarks/plan_native_overhead.py): median over steps 3.. of a 40-step
# run. It is host-side Python, so it does not scale with the device; it replaces the verl `step_fixed_s` (5 s on
# GPU profiles) that the model used to add to native runs (issue #25: held-out H200 native steps +45% / +75%).
NATIVE_STEP_FIXED_S = 0.0046  # median of 38 steps: 0.0046 s (min 0.0011, max 0.024); timing_s/adv alone 0.0018


@dataclass(frozen=True)
class Profile:
    name: str
    label: str
    # hardware, per rank
    memory_gib: float
    hbm_bytes_s: float  # device memory bandwidth
    peak_flops: float  # dense bf16 (fp32 for the CPU)
    intra_node_bytes_s: float  # one direction, per rank, inside a node (NVLink, HCCS, UB)
    inter_node_bytes_s: float  # one direction, per rank, across nodes (IB / RoCE NICs shared by the node)
    host_bytes_s: float  # host <-> device (PCIe), used by offload
    ckpt_write_bytes_s: float = 2 * GB  # one node's writes to the checkpoint file system (prior unless sourced)
    # efficiency factors (dimensionless unless named _s)
    decode_bw_eff: float = 0.6  # achieved / peak HBM bandwidth while decoding
    mfu_prefill: float = 0.4  # MFU of prefill and of compute-bound decode
    mfu_train: float = 0.3  # MFU of forward/backward in old_log_prob and update_actor (verl FSDP / framework runs)
    native_mfu_train: float = 0.3  # the same for the native engine (one process, HF model, small batches)
    comm_eff: float = 0.7  # achieved / peak interconnect bandwidth of collectives
    vllm_layer_overhead_s: float = 0.0  # per decoder layer per decode step, eager vLLM (kernel launch, host)
    graph_overhead_factor: float = 0.3  # fraction of that overhead left with graph capture on
    hf_layer_overhead_s: float = 0.0  # per layer per decode step of HF generate (native engine)
    train_layer_overhead_s: float = 0.0  # per layer per micro-batch forward (backward costs 2x)
    # per sharded (verl FSDP) training phase (old_log_prob, ref, update_actor), per token of the step's padded batch
    # (trajectories x (max_prompt + max_response)), whatever the device count: verl's single controller moves the
    # padded batch (DataProto) to the workers and the results back once per phase
    batch_move_s_per_token: float = 0.0
    step_fixed_s: float = 0.0  # per verl step: dispatch, batch balancing, advantage, logging
    native_step_fixed_s: float = NATIVE_STEP_FIXED_S  # per native step (host-side Python: the same on every device)
    reward_s_per_response: float = 0.002  # rule-based verifier, one host process
    sources: dict[str, str] = field(default_factory=dict)
    caveat: str = ""  # what the calibration says about trusting this profile, shown with every prediction
    # why verl's factors (mfu_train, step_fixed_s) predict no verl step on this profile ("": fitted on verl runs);
    # `gspo train --dry-run` then says so instead of a step time (issue #33: tiny-verl's "0 s" against 2.2-3.7 s)
    verl_unmeasured: str = ""
    # preflight's device-memory checks against this profile ("": none, as for h20 and cpu): what their messages call
    # the device, and the `cluster.profile` name they know it by when that is not `name` (A2: a2-910b)
    memory_label: str = ""
    preset_name: str = ""
    aliases: tuple[str, ...] = ()  # other names `gspo plan --profile` and `cluster.profile` accept for it

    @property
    def memory_bytes(self) -> float:
        return self.memory_gib * 1024**3

    def factors(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in FACTOR_FIELDS}

    def with_factors(self, **factors: float) -> Profile:
        return replace(self, **cast(dict[str, Any], factors))  # factor names are float fields of Profile

    def to_json(self) -> dict:
        return asdict(self)


_NV_H100 = "https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM datasheet)"
_NV_H200 = "https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM datasheet)"
_A3 = ("Ascend 910C = two dies: 780 TFLOPS BF16, 128 GB HBM, 3.2 TB/s per chip (SemiAnalysis figures as reported at "
       "https://avalanchenoticias.com.br/mercado-de-tecnologia-e-ti-noticia/o-huawei-cloudmatrix-384-super-accelerator"
       "-e-mais-rapido-que-o-nvidia-gb200-nvl72-mas-consome-muito-mais-energia/amp); halved per die")
_A2 = ("Ascend 910B: ~320 TFLOPS FP16, 64 GB HBM2e (https://boardor.com/blog/huawei-ascend-910b-outperforms-h20-910c-"
       "approaches-h100); HBM bandwidth 1.6 TB/s is the commonly quoted 910B figure, not from a Huawei datasheet")
_FIT = "fitted by benchmarks/plan_fit.py to the points marked 'fit' in gspo_cli/plan/calibration.py"
_PRIOR = "prior (not fitted: no measured point separates it); typical of published LLM serving/training runs"

# Ascend factors are shared by A2 and A3 (same CANN / vllm-ascend stack): fitted on A3 points, A2 is held out.
_ASCEND_FACTORS: dict[str, Any] = dict(decode_bw_eff=0.771, mfu_prefill=0.4, mfu_train=0.148, native_mfu_train=0.148, comm_eff=0.6,
                       vllm_layer_overhead_s=5e-5, graph_overhead_factor=0.3, hf_layer_overhead_s=0.002,
                       train_layer_overhead_s=0.0005, step_fixed_s=10.0, reward_s_per_response=0.002)
_ASCEND_SOURCES = {
    "batch_move_s_per_token": _PRIOR + " (0: the A3 points are whole-step throughputs, none separates a phase's "
    "fixed cost)",
    "mfu_train": _FIT + " (MindSpeed-RL DAPO Qwen3-32B A3, 140 tokens/s/device)",
    "decode_bw_eff": _FIT + " (cann-recipes-train Qwen3-32B first rollout, 2,261 s, enforce_eager)",
    "vllm_layer_overhead_s": _PRIOR + " (3.2 ms per decode step for 64 layers; the first-rollout point cannot "
    "separate it from decode_bw_eff)", "mfu_prefill": _PRIOR, "comm_eff": _PRIOR, "graph_overhead_factor":
        "prior: the verl Ascend GSPO guide reports 15-20% faster rollout with ACL graph FULL_DECODE_ONLY",
    "hf_layer_overhead_s": _PRIOR + " (no NPU HF-generate point)", "train_layer_overhead_s": _PRIOR,
    "step_fixed_s": _PRIOR + " (Ray dispatch, balance, adv of a verl step)", "reward_s_per_response": _PRIOR,
    "native_mfu_train": "no native-engine NPU point: the verl/MindSpeed value (prior)",
}
# A2 (910B) decodes far slower per step than its bandwidth says: verl#6747 measured 31 s of generation for 16
# GSM8K responses of a 0.5B model on one 910B (~30 ms per decode step for 24 layers), sglang#23565 reports a 910B
# TPOT 2-3x an H20's. The per-layer decode overhead is what separates A2 from A3 in the published points, so A2
# gets its own, fitted on the verl#6747 rollout; bandwidth and MFU stay shared with A3.
_A2_FACTORS: dict[str, Any] = dict(vllm_layer_overhead_s=1.236e-3)
_A2_SOURCES = {"vllm_layer_overhead_s": "fitted by benchmarks/plan_fit.py to verl#6747 (910B, Qwen2.5-0.5B GRPO, "
               "timing_s/gen 31.27 s); graph capture factor shared with A3"}
_NV_H20 = ("NVIDIA H20: 96 GB HBM3, 4.0 TB/s, 148 TFLOPS dense BF16, NVLink 900 GB/s (figures as widely reported; "
           "no public datasheet)")
# GPU factors: fitted on the H200 point (native engine, HF generate); vLLM ones are priors.
_GPU_FACTORS: dict[str, Any] = dict(
    decode_bw_eff=0.7, mfu_prefill=0.45, mfu_train=0.8388, native_mfu_train=0.1136, comm_eff=0.75,
    vllm_layer_overhead_s=0.0002, graph_overhead_factor=0.25, hf_layer_overhead_s=0.00103,
    train_layer_overhead_s=0.0002, batch_move_s_per_token=1.632e-7, step_fixed_s=5.0, reward_s_per_response=0.002)
_GPU_SOURCES = {
    "hf_layer_overhead_s": _FIT + " (issue #17: Qwen3-0.6B shape, one H200, 15.6 s HF generation)",
    "native_mfu_train": _FIT + " (issue #17: same run, 2.5 s update; small-model MFU of the native engine)",
    "mfu_train": _FIT + " (verl fully_async.md: colocate sync Qwen2.5-Math-7B on 32 x H20, old_log_prob and "
    "update_actor; 64 and 128 cards and the async runs held out). 0.84 is a high MFU for H20: with "
    "batch_move_s_per_token it absorbs the guessed 2K mean response (likely too long)",
    "batch_move_s_per_token": _FIT + " (the same two 32-card phases: old_log_prob 108 s and update_actor 314 s cannot "
    "both be compute at one MFU; what they share is a cost per phase that does not shrink with the device count: 41 s for that step's "
    "8,192 x 30,720 padded tokens)",
    "decode_bw_eff": _PRIOR, "mfu_prefill": _PRIOR, "comm_eff": _PRIOR, "vllm_layer_overhead_s": _PRIOR,
    "graph_overhead_factor": _PRIOR, "train_layer_overhead_s": _PRIOR, "step_fixed_s": _PRIOR,
    "reward_s_per_response": _PRIOR,
}
_CPU_FACTORS: dict[str, Any] = dict(decode_bw_eff=0.5, mfu_prefill=0.0970, mfu_train=0.336, native_mfu_train=0.3208, comm_eff=1.0, vllm_layer_overhead_s=0.0,
                    graph_overhead_factor=1.0, hf_layer_overhead_s=0.01279, train_layer_overhead_s=0.001498,
                    step_fixed_s=0.0545, reward_s_per_response=1.84e-05)
_CPU_SOURCES = {k: _FIT + " (native tiny runs tiny-a and tiny-c on this 2-core CPU, noisy shared machine)" for k in
                ("mfu_prefill", "native_mfu_train", "hf_layer_overhead_s", "train_layer_overhead_s",
                 "reward_s_per_response")}
_CPU_SOURCES.update({k: _PRIOR for k in ("decode_bw_eff", "comm_eff", "batch_move_s_per_token")})
_CPU_SOURCES.update({k: _PRIOR + " (verl on CPU: no measured point yet)" for k in ("mfu_train", "step_fixed_s")})

# verl on the host CPU: no verl run was fitted (its factors are priors; the model predicted 0.3 s for tiny-verl)
VERL_ON_CPU = ("the cpu profile's verl factors are priors, fitted on no verl run; measured: tiny-verl steps take "
               "2.2-4.3 s on a 2-core CPU after a verl start-up of minutes (docs/benchmarks.md \"tiny-verl learns\" "
               "and \"The README's verl route, timed\", 24 steps each, 2026-12-03)")
CPU = "cpu"  # the host-CPU profile (plan/service.py host_profile: presets on the CPU get it by default)

BUILTIN: Registry[Profile] = Registry("device profile", key="cluster.profile")
for _profile in (
    Profile("a3", "Atlas A3 (one 910C die)", 64, 1.6 * TB, 390e12, 196 * GB, 25 * GB, 32 * GB,
                  **_ASCEND_FACTORS, sources={
                      "hardware": _A3, "intra_node_bytes_s": "HCCS/UB 196 GB/s per NPU (https://"
                      "chinaresearchcollective.substack.com/p/huawei-ascend-cloudmatrix-384-supernode)",
                      "inter_node_bytes_s": "assumed 200 Gb/s RoCE per die (Atlas 800T A3 scale-out)",
                      "host_bytes_s": "assumed PCIe 5.0 x16 shared by the two dies of a chip",
                      **_ASCEND_SOURCES},
                  caveat="fitted on two A3 points; held out: Qwen2.5-32B 2K/30K within 6%, DAPO first rollout within 5%",
                  memory_label="Atlas A3 (one die)", aliases=("atlas-a3",)),
    Profile("a2", "Atlas A2 910B", 64, 1.6 * TB, 320e12, 56 * GB, 25 * GB, 32 * GB,
                  **(_ASCEND_FACTORS | _A2_FACTORS), sources={
                      "hardware": _A2, "intra_node_bytes_s": "HCCS 392 GB/s per 8-card node mesh, ~56 GB/s per "
                      "link (Atlas 800T A2 spec as commonly quoted)", "inter_node_bytes_s":
                      "8 x 200 GE RoCE per node = 25 GB/s per card", "host_bytes_s": "PCIe 4.0/5.0 x16, assumed",
                      **_ASCEND_SOURCES, **_A2_SOURCES},
                  caveat="A2 shares the A3 bandwidth/MFU factors; its decode overhead per layer is fitted on one "
                         "published A2 rollout (verl#6747) and the MindSpeed-RL A2 point is held out (docs/plan.md)",
                  memory_label="Atlas A2 910B", preset_name="a2-910b", aliases=("a2-910b", "910b")),
    Profile("h100", "NVIDIA H100 SXM", 80, 3.35 * TB, 989e12, 450 * GB, 50 * GB, 55 * GB,
                    **_GPU_FACTORS, sources={"hardware": _NV_H100, "inter_node_bytes_s": "one 400 Gb/s NIC per GPU",
                                             "host_bytes_s": "PCIe 5.0 x16", **_GPU_SOURCES},
                    caveat="no measured H100 point: GPU factors come from one native-engine H200 run; vLLM "
                           "factors are priors", memory_label="NVIDIA H100", aliases=("h100-sxm",)),
    Profile("h200", "NVIDIA H200 SXM", 141, 4.8 * TB, 989e12, 450 * GB, 50 * GB, 55 * GB,
                    **_GPU_FACTORS, sources={"hardware": _NV_H200, "inter_node_bytes_s": "one 400 Gb/s NIC per GPU",
                                             "host_bytes_s": "PCIe 5.0 x16", **_GPU_SOURCES},
                    caveat="fitted on one native-engine (HF generate) run; vLLM rollout factors are priors",
                    memory_label="NVIDIA H200", aliases=("h200-sxm",)),
    Profile("h20", "NVIDIA H20", 96, 4.0 * TB, 148e12, 450 * GB, 50 * GB, 55 * GB,
                   **_GPU_FACTORS, sources={"hardware": _NV_H20, "inter_node_bytes_s": "one 400 Gb/s NIC per GPU "
                                            "(assumed)", "host_bytes_s": "PCIe 5.0 x16", **_GPU_SOURCES},
                   caveat="GPU factors from one H200 native run; verl's fully_async H20 runs are held out (docs/plan.md)"),
    Profile("cpu", "CPU (one process)", 16, 20 * GB, 50e9, 20 * GB, 1 * GB, 20 * GB,
                   **_CPU_FACTORS, sources={"hardware": "order of magnitude for one x86 core group (assumed)",
                                            **_CPU_SOURCES},
                   caveat="fitted on the tiny model on a noisy shared 2-core machine: run-to-run spread is 2x",
                   verl_unmeasured=VERL_ON_CPU),
):
    BUILTIN.add(_profile.name, _profile)
# Other names of the built-ins (cluster.profile in presets), from their entries
ALIASES = {alias: p.name for p in BUILTIN.values() for alias in p.aliases}


def preset_name(name: str) -> str:
    """The `cluster.profile` name of profile `name`: its built-in entry's `preset_name` where it has one (A2:
    a2-910b, the name preflight's memory checks know it by), else `name` itself."""
    entry = BUILTIN.get(name)
    return (entry.preset_name or name) if entry is not None else name


def memory_checked() -> list[Profile]:
    """The built-in profiles preflight checks device memory against, in registry order."""
    return [p for p in BUILTIN.values() if p.memory_label]


def memory_profile(cluster_profile: str | None) -> Profile | None:
    """The profile whose device memory preflight checks a preset with `cluster.profile` against (exact name, any
    case; aliases and user profiles are not memory-checked), or None."""
    key = (cluster_profile or "").lower()
    return next((p for p in memory_checked() if (p.preset_name or p.name) == key), None)


def user_profiles_dir() -> Path:
    from gspo_cli import layout

    return layout.gspo_home() / "profiles"


def names() -> list[str]:
    user = sorted(p.stem for p in user_profiles_dir().glob("*.json")) if user_profiles_dir().is_dir() else []
    return list(BUILTIN) + [u for u in user if u not in BUILTIN]


def get(name: str | None) -> Profile | None:
    """A profile by name or alias: a user profile in $GSPO_HOME/profiles first, then the built-ins; None if unknown."""
    if not name:
        return None
    key = name.lower()
    path = user_profiles_dir() / f"{key}.json"
    if path.is_file():
        return _load_user(path)
    return BUILTIN.get(ALIASES.get(key, key))


def _load_user(path: Path) -> Profile:
    from gspo_cli.errors import ConfigError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        base = BUILTIN[ALIASES.get(data["base"], data["base"])]
        factors = {k: float(v) for k, v in data.get("factors", {}).items() if k in FACTOR_FIELDS}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"profile {path} is unreadable ({exc})", "delete it or save it again with "
                          "`gspo plan --calibrate RUN --save-profile NAME`") from exc
    sources = dict(base.sources) | {k: f"calibrated from {data.get('run', '?')} (saved {path.name})" for k in factors}
    # calibrated on a verl run: its verl factors are measured now
    unmeasured = "" if {"mfu_train", "step_fixed_s"} & set(factors) else base.verl_unmeasured
    return replace(base, name=path.stem, label=f"{base.label}, calibrated ({path.stem})", sources=sources,
                   verl_unmeasured=unmeasured, **cast(dict[str, Any], factors))


def save_user(name: str, base: Profile, factors: dict[str, float], run: str) -> Path:
    from gspo_cli.fsutil import atomic_write_json

    path = user_profiles_dir() / f"{name.lower()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    root = base.name if base.name in BUILTIN else next((n for n, p in BUILTIN.items() if p.label in base.label), "cpu")
    atomic_write_json(path, {"base": root, "run": run, "factors": {k: round(v, 8) for k, v in factors.items()}})
    return path

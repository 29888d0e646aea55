"""Layout search: every combination of the knobs that change speed but not the algorithm (rollout TP, Ulysses
SP, offload, vLLM memory utilisation and batched tokens, micro-batch tokens), kept when preflight accepts it,
ranked by predicted tokens per device per second.

Each candidate is the given preset with some keys changed; its `--set` lines reproduce it. Batch sizes, n,
lengths and the model are never changed: those change what is trained, not how fast.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gspo_cli.plan import memory
from gspo_cli.plan import model as step_model
from gspo_cli.plan.workload import Lengths, from_preset

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts
    from gspo_cli.sizing.profiles import Profile
    from gspo_cli.sizing.report import Preflight

UTILISATIONS = (0.7, 0.8, 0.9)  # below 0.7 the KV cache of long responses rarely fits
WARN_PENALTY = 0.97
OFFLOADS = ((False, False), (False, True), (True, True))  # (param_offload, optimizer_offload)


@dataclass
class Layout:
    changes: dict[str, object]  # preset key -> value, relative to the given preset
    prediction: step_model.Prediction
    verdict: memory.Verdict

    @property
    def sets(self) -> list[str]:
        return [f"{k}={_fmt(v)}" for k, v in self.changes.items()]

    @property
    def mode(self) -> str:
        return str(self.changes.get("trainer.mode", "sync"))

    def to_json(self) -> dict:
        return {"sets": self.sets, "mode": self.mode, "staleness_updates": self.prediction.staleness, "step_s": round(self.prediction.step_s, 3),
                "tokens_per_device_per_s": round(self.prediction.tokens_per_device_per_s, 3),
                "bottleneck": self.prediction.bottleneck, "phases": {k: round(v, 3) for k, v in
                                                                     self.prediction.phases.items()},
                "memory_verdict": self.verdict.status, "memory": self.verdict.memory,
                "warnings": self.verdict.problems}


@dataclass
class SearchResult:
    layouts: list[Layout]  # accepted by preflight, fastest first
    evaluated: int = 0
    rejected: int = 0
    rejected_by: dict[str, int] = field(default_factory=dict)  # first error check name -> count
    modes: list[Layout] = field(default_factory=list)  # verl's async modes on the fastest sync layout


def _fmt(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _divisors(n: int, options=(1, 2, 4, 8, 16)) -> list[int]:
    return [d for d in options if n % d == 0]


def knob_grid(preset: Preset) -> list[dict[str, object]]:
    """The candidate changes for this preset's engine (the preset's own values are always included)."""
    from gspo_cli.config.engine_registry import engine_of

    a, r, d, c = preset.actor, preset.rollout, preset.data, preset.cluster
    if not engine_of(preset).planner.sharded:  # one unsharded model: the micro-batch size is the only knob
        per_step = d.train_batch_size * r.n
        micros = sorted({a.ppo_micro_batch_size_per_device or per_step} | {m for m in (8, 32, 128) if m < per_step})
        return [{"actor.ppo_micro_batch_size_per_device": m} for m in micros]
    seq = d.max_prompt_length + d.max_response_length
    tps = sorted(set(_divisors(c.devices_per_node)) | {r.tensor_parallel_size}) if r.name == "vllm" else [1]
    # Ulysses SP is an FSDP knob; the Megatron actor's layout (actor.megatron) is the preset's own, kept as it is
    sps = [1] if a.strategy == "megatron" else sorted(set(_divisors(c.world_size, (1, 2, 4, 8))) |
                                                       {a.ulysses_sequence_parallel_size})
    utils = sorted(set(UTILISATIONS) | {r.gpu_memory_utilization})
    batched = sorted({r.max_num_batched_tokens, 2 * max(seq, 8192)})
    grid: list[dict[str, object]] = []
    for tp, sp, (po, oo), util, bt, k in itertools.product(tps, sps, OFFLOADS, utils, batched, (1, 2, 4)):
        micro = k * -(-seq // sp)
        grid.append({"rollout.tensor_parallel_size": tp, "actor.ulysses_sequence_parallel_size": sp,
                     "actor.param_offload": po, "actor.optimizer_offload": oo,
                     "rollout.gpu_memory_utilization": util, "rollout.max_num_batched_tokens": bt,
                     "actor.use_dynamic_bsz": True, "actor.ppo_max_token_len_per_device": micro,
                     **_expert_parallel(preset, tp)})
    return grid


def _expert_parallel(preset: Preset, tp: int) -> dict[str, object]:
    """A preset with rollout expert parallelism keeps it on at every TP: verl wants EP = TP x DP (moe_checks)."""
    r = preset.rollout
    return {"rollout.expert_parallel_size": tp * r.data_parallel_size} if r.expert_parallel_size > 1 else {}


def apply(preset: Preset, changes: dict[str, object]) -> Preset:
    """The preset with `changes` (dotted keys of the actor / rollout sections) applied."""
    sections: dict[str, dict] = {}
    for key, value in changes.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, {})[name] = value
    return preset.model_copy(update={s: getattr(preset, s).model_copy(update=u) for s, u in sections.items()})


def _diff(preset: Preset, changes: dict[str, object]) -> dict[str, object]:
    out = {}
    for key, value in changes.items():
        section, name = key.split(".", 1)
        if getattr(getattr(preset, section), name) != value:
            out[key] = value
    return out


def mode_variants(preset: Preset) -> list[dict[str, object]]:
    """verl's V1 async modes on top of a layout (separate_async with verl's batch rule and half the devices)."""
    from gspo_cli.config.engine_registry import engine_of

    if not engine_of(preset).planner.async_modes:
        return []
    out: list[dict[str, object]] = [{"trainer.mode": "colocate_async"}]
    d, a = preset.data, preset.actor
    if d.train_batch_size % a.ppo_mini_batch_size == 0 and preset.cluster.world_size > 1:
        out.append({"trainer.mode": "separate_async", "trainer.rollout_share": 0.5,
                    "trainer.parameter_sync_step": d.train_batch_size // a.ppo_mini_batch_size})
    return out


def search(preset: Preset, facts: ModelFacts, prof: Profile, lengths: Lengths | None = None, top: int = 10, *,
           preflight: Preflight) -> SearchResult:
    """Evaluate every candidate layout: `preflight`'s verdict first, the step-time model on the accepted ones; then
    verl's async modes on the fastest few (each carries preflight's staleness warning as its stated risk)."""
    result = SearchResult([])
    seen: set = set()
    _evaluate(preset, facts, prof, lengths, knob_grid(preset), seen, result, preflight)
    best = [dict(lay.changes) for lay in _distinct(list(result.layouts))[:MODE_BASES]] or [{}]
    modes = [base | mode for base in best for mode in mode_variants(preset)]
    before = len(result.layouts)
    _evaluate(preset, facts, prof, lengths, modes, seen, result, preflight)
    result.modes = [lay for lay in result.layouts[before:] if lay.changes.items() >= best[0].items()]
    result.layouts = _distinct(result.layouts)[:top]
    return result


MODE_BASES = 3  # async modes are tried on this many of the fastest sync layouts


def _evaluate(preset: Preset, facts: ModelFacts, prof: Profile, lengths: Lengths | None, grid: list[dict[str, object]],
              seen: set, result: SearchResult, preflight: Preflight) -> None:
    for changes in grid:
        diff = _diff(preset, changes)
        key = tuple(sorted(diff.items()))
        if key in seen:
            continue
        seen.add(key)
        cand = apply(preset, diff)
        result.evaluated += 1
        verdict = memory.verdict(cand, facts, preflight)
        if verdict.status == "error":
            result.rejected += 1
            first = verdict.problems[0].split(":", 1)[0] if verdict.problems else "error"
            result.rejected_by[first] = result.rejected_by.get(first, 0) + 1
            continue
        work = from_preset(cand, facts, kv_capacity_tokens=verdict.kv_capacity_tokens, lengths=lengths)
        result.layouts.append(Layout(diff, step_model.predict(work, prof), verdict))


def _distinct(found: list[Layout]) -> list[Layout]:
    """Fastest first (a layout with a preflight warning, e.g. memory above 90%, ranks as if 3% slower: a near tie
    goes to the safe one); of layouts the model cannot tell apart (same speed to 0.1%), the fewest changes."""
    def rank(lay: Layout):
        speed = lay.prediction.tokens_per_device_per_s * (WARN_PENALTY if lay.verdict.status == "warn" else 1.0)
        return -speed, len(lay.changes)

    found.sort(key=rank)
    out: list[Layout] = []
    for lay in found:
        speed = lay.prediction.tokens_per_device_per_s
        if out and abs(out[-1].prediction.tokens_per_device_per_s - speed) <= 1e-3 * max(speed, 1e-9):
            continue
        out.append(lay)
    return out

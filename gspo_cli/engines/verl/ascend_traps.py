"""vLLM-Ascend traps of verl's colocated rollout (sleep, wake, weight sync) on Mixture-of-Experts models, as data
with the versions each holds for (pure, no I/O). Each was read at its source; docs/ascend.md "Known MoE traps"
says what every source says, including the leads that gave no check.

  ascend-nz-wake-up        vllm-ascend's NPUWorker.wake_up raises when the FRACTAL_NZ weight format is on
  ascend-moe-graph-reload  unquantized MoE experts re-allocated after each weight sync while ACL graphs replay
                           the addresses they captured
  ascend-ep-sleep-level2   a verl other than the one read may sleep at level 2: with EP the expert map goes stale
                           (verl#7086); verl 0.9.x sleeps at level 1 on NPU (an info line says so)
  (info)                   the wake_up expert transpose (vllm-ascend#11548/#12226), paired with verl's full sync

Versions: the vllm-ascend one is the preset's `env.vllm_ascend` (the release its job env is judged against), the
verl one the installed verl when preflight knows it, else gspo's pin (verl >=0.9.1,<0.10).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.checks import ERROR, INFO, OK, WARN, Check
from gspo_cli.engines.verl.traps import _DELETED, verl_overrides
from gspo_cli.env.matrix import VERL_REQUIREMENTS, base_release, in_range
from gspo_cli.signatures import tagged

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.sizing.model_facts import ModelFacts

R = "actor_rollout_ref.rollout"
NZ_VAR = "VLLM_ASCEND_ENABLE_NZ"
NZ_CONFIG = f"{R}.engine_kwargs.vllm.additional_config.weight_nz_mode"
# vllm-ascend's NPUWorker.wake_up raises on NZ from v0.11.0 (PR #4023) through v0.23.0 and main (read in the
# tags); VLLM_ASCEND_ENABLE_NZ defaults to 1 there (vllm_ascend/envs.py), additional_config.weight_nz_mode wins
# over it (ascend_config.py _get_config_value). verl 0.9.1 sets VLLM_ASCEND_ENABLE_NZ=0 in its vLLM workers only
# when the variable is unset (workers/rollout/vllm_rollout/utils.py:44 and :199-201).
NZ_WAKE_RAISES_FROM = "0.11.0"
# verl 0.9.1 sleeps vLLM at level 1 on NPU whatever the layout (vllm_async_server.py _resolve_sleep_level,
# third_party/vllm/__init__.py VLLM_SLEEP_LEVEL = 1 under is_npu_available; verl PR #6170).
VERL_NPU_LEVEL1 = (VERL_REQUIREMENTS["verl"][1], VERL_REQUIREMENTS["verl"][3])
# NPUWorker.wake_up transposes unquantized w13/w2 expert weights in every release tag read (v0.18.0 ... v0.25.1rc1,
# releases/v0.26.0rc); PR #13012 removed it on main only (2026-08-07).
WAKE_TRANSPOSE_FIXED_ON = "main after vllm-project/vllm-ascend#13012 (no release tag carries it)"


def _value(preset: Preset, over: dict[str, object]) -> tuple[str | None, str]:
    """The NZ mode vLLM-Ascend will see and where it comes from (additional_config wins over the variable)."""
    if NZ_CONFIG in over and over[NZ_CONFIG] is not _DELETED:
        return str(over[NZ_CONFIG]), f"overrides.verl {NZ_CONFIG}"
    if NZ_VAR in preset.env.vars:
        return preset.env.vars[NZ_VAR], f"env.vars.{NZ_VAR}"
    return None, f"unset (verl 0.9.1 sets {NZ_VAR}=0 in its vLLM workers)"


def sleeps(over: dict[str, object]) -> bool:
    """verl's rollout.free_cache_engine (default True, trainer/config/rollout/rollout.yaml): the rollout sleeps
    between phases and wakes for each weight sync."""
    value = over.get(f"{R}.free_cache_engine", True)
    return value is _DELETED or str(value).strip().lower() not in ("false", "0", "no")


def _line(preset: Preset) -> str | None:
    return base_release(preset.env.vllm_ascend)


def nz_checks(preset: Preset, over: dict[str, object]) -> list[Check]:
    value, where = _value(preset, over)
    keys = [f"env.vars.{NZ_VAR}", "overrides.verl"]
    line = _line(preset)
    if line and not in_range(line, NZ_WAKE_RAISES_FROM, None):
        return []
    if value is None or value.strip() in ("0", ""):
        return [Check("NZ weight format and sleep", OK, f"FRACTAL_NZ off ({where}): vLLM-Ascend's wake_up "
                      "accepts the rollout's weights", keys)]
    if not sleeps(over):
        return [Check("NZ weight format and sleep", INFO, f"FRACTAL_NZ mode {value} ({where}) with "
                      "rollout.free_cache_engine off: wake_up is never called", keys)]
    return [Check("NZ weight format and sleep", ERROR, tagged("ascend-nz-wake-up", (
        f"FRACTAL_NZ mode {value} ({where}) with verl's sleeping rollout: vllm-ascend "
        f"{preset.env.vllm_ascend or '>= ' + NZ_WAKE_RAISES_FROM}'s NPUWorker.wake_up raises ValueError "
        "('FRACTAL_NZ mode is enabled ...') at the first weight sync")), keys,
        f"set env.vars.{NZ_VAR}: \"0\" (ROLL's NPU CI does; verl 0.9.1 sets it only when unset) and drop "
        "additional_config.weight_nz_mode")]


def graph_checks(preset: Preset, model: ModelFacts, over: dict[str, object]) -> list[Check]:
    r = preset.rollout
    keys = ["rollout.enforce_eager", "rollout.cudagraph_mode"]
    if r.enforce_eager:
        return [Check("ACL graphs and MoE weight sync", OK, "eager rollout: no captured graph holds expert "
                      "weight addresses across weight syncs", keys)]
    return [Check("ACL graphs and MoE weight sync", WARN, tagged("ascend-moe-graph-reload", (
        f"ACL graphs ({r.cudagraph_mode or 'vLLM default mode'}) on {model.name}'s unquantized experts: verl 0.9.1 "
        "reruns process_weights_after_loading after each sync, and vllm-ascend's unquantized MoE method writes "
        "w13/w2 into new contiguous storage there (v0.18.0-v0.23.0, main), while a captured graph replays the "
        "addresses it captured (vllm-ascend#13902 / #7473 fixed this for other layers; RFC #16322, open, lists "
        "the MoE path). Read in the source, not measured: verl's A3 MoE GSPO nightly runs graph mode")), keys,
        "set rollout.enforce_eager: true to rule it out; with graphs keep rollout.calculate_log_probs: true so the "
        "`mismatch` health rule sees a stale rollout from step 2 (training/rollout_probs_diff_*)")]


def sleep_level_checks(preset: Preset, verl: str | None) -> list[Check]:
    ep = preset.rollout.expert_parallel_size
    keys = ["rollout.expert_parallel_size"]
    known = verl is None or in_range(base_release(verl), *VERL_NPU_LEVEL1)
    which = f"verl {verl}" if verl else "verl 0.9.x (gspo's pin)"
    if known:
        return [Check("rollout sleep level (EP)", INFO, f"{which} sleeps vLLM-Ascend at level 1 (weights offloaded "
                      "to host, not discarded), so verl#7086's EP + level-2 stale expert map is not reached"
                      + (f" with EP {ep}" if ep > 1 else ""), keys)]
    if ep <= 1:
        return []
    return [Check("rollout sleep level (EP)", WARN, tagged("ascend-ep-sleep-level2", (
        f"{which} is not the verl gspo read: if it sleeps vLLM-Ascend at level 2, EP {ep} keeps a stale "
        "expert_ids_per_ep_rank after the reload (verl PR #7086, open): fluent but wrong rollouts")), keys,
        "use verl 0.9.x (level 1 on NPU), or rollout.expert_parallel_size: 1")]


def checks(preset: Preset, model: ModelFacts | None, versions: dict[str, str | None] | None = None) -> list[Check]:
    """The vLLM-Ascend colocated-rollout traps of `preset` (empty unless verl + vLLM on NPU)."""
    if preset.trainer.engine != "verl" or preset.rollout.name != "vllm" or preset.cluster.device != "npu":
        return []
    over = verl_overrides(preset)
    out = nz_checks(preset, over)
    if model is None or not model.is_moe:
        return out
    out += graph_checks(preset, model, over) if sleeps(over) else []
    out += sleep_level_checks(preset, (versions or {}).get("verl"))
    out.append(Check("wake_up expert transpose", INFO, (
        f"vllm-ascend {preset.env.vllm_ascend or '(release unknown)'} transposes unquantized expert weights in "
        "wake_up (vllm-ascend#11548/#12226: wrong shapes when nothing is reloaded; fixed on "
        f"{WAKE_TRANSPOSE_FIXED_ON}); verl 0.9.1 follows every wake with a full weight sync and "
        "process_weights_after_loading, which restores the layout"), ["rollout.name"]))
    return out

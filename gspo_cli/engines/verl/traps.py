"""Configuration traps of verl 0.9.1: settings verl accepts that do not do what the preset says (pure, no I/O).

Part of preflight (`preflight.evaluate`), so `gspo train` refuses and `--dry-run` shows them, and of
`gspo presets show`. Each check names its failure signature (gspo_cli/signatures.py, docs/failures.md):
  gspo-token-mean   GSPO aggregated with token-mean (verl 0.9.1's default) unless the preset asks for it
  gspo-bypass-mode  algorithm.rollout_correction.bypass_mode swaps the GSPO loss for token-level PPO-clip
  gspo-ppo-clip     GRPO-sized clip ratios (> 0.01) under the GSPO loss
  verl-inert-key    keys verl accepts but does not read on this path, with the key it reads instead
The values judged are the ones verl will get: the preset's, with `overrides.verl` (which compile appends last,
so it wins) applied on top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gspo_cli.checks import ERROR, INFO, OK, WARN, Check
from gspo_cli.signatures import tagged

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

A = "actor_rollout_ref.actor"
REF = "actor_rollout_ref.ref"
GSPO_LOSSES = ("gspo", "gspo_token")
VERL_DEFAULT_AGG = "token-mean"  # verl 0.9.1 trainer/config/actor/actor.yaml
MAX_GSPO_CLIP = 0.01  # the paper uses 3e-4 / 4e-4; GRPO's 0.2 / 0.28 is ~1000x wider
_DELETED = object()


def verl_overrides(preset: Preset) -> dict[str, object]:
    """overrides.verl as key -> raw value text (`~key` -> _DELETED), later entries winning, as Hydra applies them."""
    out: dict[str, object] = {}
    for item in preset.overrides.verl:
        if item.startswith("~"):
            out[item.lstrip("~").split("=", 1)[0]] = _DELETED
        elif "=" in item:
            key, value = item.split("=", 1)
            out[key.lstrip("+")] = value.strip().strip("'\"")
    return out


def _number(value: object, default: float) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _is_true(value: object) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


def loss_agg_checks(preset: Preset, over: dict[str, object]) -> list[Check]:
    alg = preset.algorithm
    key = f"{A}.loss_agg_mode"
    raw = over.get(key, alg.loss_agg_mode)
    mode = VERL_DEFAULT_AGG if raw is _DELETED else str(raw)
    keys = ["algorithm.loss_agg_mode", "algorithm.loss_mode"]
    if alg.loss_mode not in GSPO_LOSSES:
        return []
    explicit = "loss_agg_mode" in alg.model_fields_set and alg.loss_agg_mode == mode
    if mode == "token-mean" and not explicit:
        via = "verl's default: overrides.verl deletes the key" if raw is _DELETED else "overrides.verl"
        return [Check("GSPO loss aggregation", ERROR, tagged("gspo-token-mean", (
            f"verl would aggregate the {alg.loss_mode} loss with token-mean ({via}): verl 0.9.1's GSPO loss follows "
            "actor.loss_agg_mode (default token-mean; 0.9.0 hard-coded seq-mean-token-mean), so this trains a "
            "token-weighted objective, not the paper's per-sequence mean")), keys,
            "set algorithm.loss_agg_mode: seq-mean-token-mean, or write algorithm.loss_agg_mode: token-mean in the "
            "preset if that objective is intended")]
    if key in over and mode != alg.loss_agg_mode:
        return [Check("GSPO loss aggregation", WARN, f"overrides.verl sets {key}={mode} while "
                      f"algorithm.loss_agg_mode is {alg.loss_agg_mode}: verl uses {mode}", keys + ["overrides.verl"],
                      "set algorithm.loss_agg_mode instead of overriding verl's key")]
    if mode == "token-mean":
        return [Check("GSPO loss aggregation", WARN, tagged("gspo-token-mean", (
            f"{alg.loss_mode} with token-mean, as the preset says: each token weighs the same, so long responses "
            "dominate (the GSPO paper averages per sequence: seq-mean-token-mean)")), keys)]
    return [Check("GSPO loss aggregation", OK, f"{alg.loss_mode} aggregated with {mode} (set explicitly: verl "
                  "0.9.1's default is token-mean)", keys)]


def bypass_checks(preset: Preset, over: dict[str, object]) -> list[Check]:
    key = "algorithm.rollout_correction.bypass_mode"
    if preset.algorithm.loss_mode not in GSPO_LOSSES or not _is_true(over.get(key, False)):
        return []
    return [Check("rollout-correction bypass", ERROR, tagged("gspo-bypass-mode", (
        f"overrides.verl sets {key}=true: verl's apply_bypass_mode then replaces policy_loss.loss_mode with "
        f"bypass_mode (token-level PPO-clip on rollout log-probs), so the {preset.algorithm.loss_mode} loss is "
        "never used")), ["overrides.verl", "algorithm.loss_mode"],
        f"remove {key} from overrides.verl (keep rollout.calculate_log_probs: true to log the train/rollout gap)")]


def clip_checks(preset: Preset, over: dict[str, object]) -> list[Check]:
    alg = preset.algorithm
    if alg.loss_mode not in GSPO_LOSSES:
        return []
    low = _number(over.get(f"{A}.clip_ratio_low", alg.clip_ratio_low), alg.clip_ratio_low)
    high = _number(over.get(f"{A}.clip_ratio_high", alg.clip_ratio_high), alg.clip_ratio_high)
    keys = ["algorithm.clip_ratio_low", "algorithm.clip_ratio_high"]
    if max(low, high) <= MAX_GSPO_CLIP:
        return [Check("GSPO clip range", OK, f"clip ratios {low:g} / {high:g} (GSPO scale, <= {MAX_GSPO_CLIP:g})", keys)]
    return [Check("GSPO clip range", ERROR, tagged("gspo-ppo-clip", (
        f"clip ratios {low:g} / {high:g} are PPO/GRPO-sized: GSPO clips a length-normalised sequence ratio that "
        "stays within ~1e-3 of 1, so its range is ~1000x tighter (paper: 3e-4 / 4e-4; trl#3834, verl#2775); with "
        f"these nothing is clipped")), keys,
        "use clip_ratio_low: 3.0e-4 and clip_ratio_high: 4.0e-4, or loss_mode: vanilla for PPO-style clipping")]


def _inert_rows(preset: Preset, over: dict[str, object]) -> list[tuple[str, str, str | None, str | None]]:
    """(inert verl key, where verl reads the live setting, the inert value, the live value) for this preset."""
    alg, a = preset.algorithm, preset.actor
    rows: list[tuple[str, str, str | None, str | None]] = []
    grad = over.get(f"{A}.grad_clip", a.grad_clip)
    live = over.get(f"{A}.optim.clip_grad", a.grad_clip)
    rows.append((f"{A}.grad_clip", f"{A}.optim.clip_grad (the FSDP engine's optimizer config)", str(grad), str(live)))
    if alg.loss_mode in GSPO_LOSSES:
        rows.append((f"{A}.clip_ratio_c", "nothing: only the vanilla (dual-clip PPO) loss reads it", None, None))
    if not (alg.use_kl_loss or alg.use_kl_in_reward):
        rows.append((f"{REF}.*", "nothing: no reference policy without use_kl_loss / use_kl_in_reward", None, None))
    if "actor_rollout_ref.nccl_timeout" in over:
        env = preset.env.vars.get("HCCL_CONNECT_TIMEOUT")
        rows.append(("actor_rollout_ref.nccl_timeout", "HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT (env.vars); only "
                     "the critic's config reads nccl_timeout", str(over["actor_rollout_ref.nccl_timeout"]), env))
    if alg.entropy_coeff == 0:
        rows.append((f"{A}.entropy_checkpointing", "nothing while entropy_coeff is 0 (no entropy gradient)", None, None))
    return rows


def inert_checks(preset: Preset, over: dict[str, object]) -> list[Check]:
    rows = _inert_rows(preset, over)
    listing = "; ".join(f"{key} -> {live}" for key, live, _, _ in rows)
    checks = [Check("inert verl keys", INFO, tagged("verl-inert-key", f"accepted but not read by verl 0.9.1 here: "
                                                    f"{listing}"), ["overrides.verl"])]
    for key, live, value, live_value in rows:
        if value is not None and _number(value, float("nan")) != _number(live_value, float("nan")):
            checks.append(Check(f"inert {key.rsplit('.', 1)[-1]}", WARN, tagged("verl-inert-key", (
                f"{key}={value} is not read by verl 0.9.1; the live setting is {live} = {live_value}")),
                ["overrides.verl"], f"set the live setting ({live.split(' ', 1)[0]}) instead"))
    return checks


def checks(preset: Preset) -> list[Check]:
    """Every trap check for a verl-engine preset (empty for other engines)."""
    if preset.trainer.engine != "verl":
        return []
    over = verl_overrides(preset)
    return [*loss_agg_checks(preset, over), *bypass_checks(preset, over), *clip_checks(preset, over),
            *inert_checks(preset, over)]

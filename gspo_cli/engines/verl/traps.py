"""Configuration traps of verl 0.9.1: settings verl accepts that do not do what the preset says (pure, no I/O).

Part of preflight (`preflight.evaluate`), so `gspo train` refuses and `--dry-run` shows them, and of
`gspo presets show`. Each check names its failure signature (gspo_cli/signatures.py, docs/failures.md):
  gspo-token-mean   GSPO aggregated with token-mean (verl 0.9.1's default) unless the preset asks for it
  gspo-bypass-mode  algorithm.rollout_correction: bypass mode in verl's legacy trainer swaps the GSPO loss for
                    token-level PPO-clip; in the V1 trainer it keeps GSPO but ignores the IS / rejection settings
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


RC = "algorithm.rollout_correction"
# verl 0.9.1's yaml defaults of algorithm.rollout_correction (trainer/config/algorithm/rollout_correction.yaml):
# with no section in the preset verl still builds the config, so rollout_corr/* metrics are logged (no weights)
# whenever the rollout returns its log-probs.
RC_YAML_DEFAULTS: dict[str, object] = {"rollout_is": None, "rollout_is_threshold": 2.0, "rollout_rs": None,
                                       "rollout_rs_threshold": None, "bypass_mode": False, "loss_type": "ppo_clip",
                                       "rollout_is_batch_normalize": False}


def rollout_correction_setting(preset: Preset, over: dict[str, object] | None = None) -> dict[str, object]:
    """What verl's algorithm.rollout_correction will hold: its yaml defaults, the preset's section, then
    overrides.verl (which compile appends last). Values from overrides.verl stay raw text."""
    over = verl_overrides(preset) if over is None else over
    out = dict(RC_YAML_DEFAULTS)
    section = preset.algorithm.rollout_correction
    if section is not None:
        out.update(section.verl_items())
    for key, value in over.items():
        if key.startswith(RC + "."):
            name = key[len(RC) + 1:]
            out[name] = RC_YAML_DEFAULTS.get(name) if value is _DELETED else value
    for name in ("rollout_is", "rollout_rs"):
        if str(out[name]).strip().lower() in ("none", "null", ""):
            out[name] = None
    out["bypass_mode"] = _is_true(out["bypass_mode"])
    return out


def legacy_trainer(over: dict[str, object]) -> bool:
    """trainer.use_v1=false in overrides.verl: verl's legacy RayPPOTrainer (main_ppo_v0) instead of the V1 trainer
    gspo compiles for (verl 0.9.1's default, trainer/config/ppo_trainer.yaml use_v1: true)."""
    return "trainer.use_v1" in over and not _is_true(over["trainer.use_v1"])


def rollout_correction_checks(preset: Preset, over: dict[str, object]) -> list[Check]:
    """What verl 0.9.1 does with algorithm.rollout_correction under this preset's loss and trainer (read in verl's
    code, tests/engines/verl/test_rollout_correction_semantics.py keeps the reading honest):

    - V1 trainer (gspo's), decoupled: trainer/ppo/v1/trainer_base.py `_compute_advantage` calls
      `compute_rollout_correction_and_add_to_batch` when the batch holds rollout_log_probs: the IS weights reach the
      loss (workers/utils/losses.py `ppo_loss` passes rollout_is_weights; core_algos.py `compute_policy_loss_gspo`
      multiplies its per-token losses by them) and rejection rewrites response_mask. GSPO is kept.
    - V1 trainer, bypass: `_compute_old_log_prob` copies rollout_log_probs into old_log_probs and returns; the
      correction step is skipped (`not bypass_recomputing_logprobs`), so rollout_is / rollout_rs / loss_type are
      never read, and no training/rollout_probs_diff_* or rollout_corr/* is logged. The GSPO loss is kept (its
      ratio anchored on the rollout's log-probs).
    - legacy trainer (trainer.use_v1=false), bypass: ray_trainer.py calls `apply_bypass_mode`, which sets
      policy_loss.loss_mode = "bypass_mode" (token-level PPO-clip or REINFORCE): the GSPO loss is silently replaced.
    - any mode without rollout.calculate_log_probs: decoupled silently skips the correction (no rollout_log_probs
      in the batch); bypass fails at its first step (nothing to copy).
    """
    rc = rollout_correction_setting(preset, over)
    if preset.algorithm.rollout_correction is None and not any(k.startswith(RC + ".") for k in over):
        return []
    setting = (f"{'bypass' if rc['bypass_mode'] else 'decoupled'}, rollout_is={rc['rollout_is']} "
               f"(threshold {rc['rollout_is_threshold']}), rollout_rs={rc['rollout_rs']}"
               + (f" (threshold {rc['rollout_rs_threshold']})" if rc["rollout_rs"] else ""))
    if not preset.rollout.calculate_log_probs:
        what = ("fails at its first step (no rollout_log_probs to copy into old_log_probs)" if rc["bypass_mode"] else
                "is silently skipped: verl applies it only when the batch holds rollout_log_probs")
        return [Check(RC_CHECK, ERROR, f"{setting}: rollout.calculate_log_probs is false, so verl's correction {what}",
                      _rc_keys("rollout.calculate_log_probs"), "set rollout.calculate_log_probs: true")]
    if rc["bypass_mode"] and legacy_trainer(over):
        return [_legacy_bypass(preset, rc, setting)]
    if rc["bypass_mode"]:
        return [_v1_bypass(preset, rc)]
    return _decoupled(preset, rc, setting)


RC_CHECK = "rollout correction"


def _rc_keys(*more: str) -> list[str]:
    return [RC, "overrides.verl", *more]


def _legacy_bypass(preset: Preset, rc: dict[str, object], setting: str) -> Check:
    """Bypass mode in verl's legacy trainer: apply_bypass_mode swaps the loss for its own."""
    loss = preset.algorithm.loss_mode
    if loss not in GSPO_LOSSES:
        return Check(RC_CHECK, WARN, f"{setting}: verl's legacy trainer replaces {loss} with its bypass_mode loss "
                     f"({rc['loss_type']})", _rc_keys())
    return Check(RC_CHECK, ERROR, tagged("gspo-bypass-mode", (
        f"bypass_mode with trainer.use_v1=false: verl's legacy trainer calls apply_bypass_mode, which sets "
        f"policy_loss.loss_mode to bypass_mode (token-level {rc['loss_type']} on rollout log-probs), so the "
        f"{loss} loss is never used")), _rc_keys(),
        "remove trainer.use_v1=false (verl's V1 trainer keeps the GSPO loss in bypass mode), or set "
        "algorithm.rollout_correction.bypass_mode: false")


def _v1_bypass(preset: Preset, rc: dict[str, object]) -> Check:
    """Bypass mode in the V1 trainer: GSPO kept, the correction step (IS weights, rejection) skipped."""
    ignored = [k for k in ("rollout_is", "rollout_rs") if rc[k] is not None]
    if rc["loss_type"] != "ppo_clip":
        ignored.append(f"loss_type={rc['loss_type']}")
    head = (f"bypass: verl's V1 trainer copies the rollout log-probs into old_log_probs and keeps the "
            f"{preset.algorithm.loss_mode} loss (its ratio is then pi / pi_rollout); training/rollout_probs_diff_* "
            "and rollout_corr/* are no longer logged (the mismatch health rule goes quiet)")
    if not ignored:
        return Check(RC_CHECK, INFO, tagged("gspo-bypass-mode", head), _rc_keys())
    return Check(RC_CHECK, WARN, tagged("gspo-bypass-mode", (
        f"{head}; {', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} silently ignored: V1 skips the "
        "correction step in bypass mode")), _rc_keys(),
        "drop bypass_mode to apply the IS weights / rejection, or drop them to say what runs")


def _decoupled(preset: Preset, rc: dict[str, object], setting: str) -> list[Check]:
    """Decoupled mode: the IS weights reach the loss, rejection rewrites the response mask; token-level ones sit
    unevenly inside GSPO's sequence-level objective."""
    loss = preset.algorithm.loss_mode
    gspo, out = loss in GSPO_LOSSES, []
    if gspo and rc["rollout_is"] == "token":
        out.append(Check(RC_CHECK, WARN, (
            f"{setting}: token-level IS weights multiply each token's share of the {loss} loss by its own "
            "pi_old / pi_rollout, so one response is weighted unevenly inside a sequence-level objective"), _rc_keys(),
            "set algorithm.rollout_correction.rollout_is: sequence (one weight per response, as GSPO's ratio)"))
    token_rs = [o for o in str(rc["rollout_rs"] or "").split(",") if o.strip().startswith("token_")]
    if gspo and token_rs:
        out.append(Check(RC_CHECK, WARN, (
            f"{setting}: token-level rejection ({', '.join(token_rs)}) masks single tokens out of a response, which "
            f"changes the length-normalised sequence ratio {loss} clips"), _rc_keys(),
            "use a seq_* rejection option (seq_mean_k1 / seq_mean_k3 judge the whole response)"))
    if out:
        return out
    if rc["rollout_is"] is None and rc["rollout_rs"] is None:
        return [Check(RC_CHECK, INFO, f"{setting}: metrics only (rollout_corr/*); no weights, no rejection", _rc_keys())]
    return [Check(RC_CHECK, OK, (
        f"{setting}: verl's V1 trainer computes the weights once per batch from the recomputed old log-probs and "
        f"the rollout's, the {loss} loss multiplies its per-token losses by them"
        + (" (a sequence weight is exp of the summed token log-ratios, not GSPO's length-normalised mean: long "
           "responses reach the threshold first)" if rc["rollout_is"] == "sequence" else "")
        + "; metrics rollout_corr/*"), _rc_keys())]


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
    fsdp = a.strategy != "megatron"  # the Megatron route compiles neither FSDP key below (engines/verl/megatron.py)
    if fsdp:
        grad, live = over.get(f"{A}.grad_clip", a.grad_clip), over.get(f"{A}.optim.clip_grad", a.grad_clip)
        rows.append((f"{A}.grad_clip", f"{A}.optim.clip_grad (the FSDP engine's optimizer config)", str(grad),
                     str(live)))
    if alg.loss_mode in GSPO_LOSSES:
        rows.append((f"{A}.clip_ratio_c", "nothing: only the vanilla (dual-clip PPO) loss reads it", None, None))
    if not (alg.use_kl_loss or alg.use_kl_in_reward):
        rows.append((f"{REF}.*", "nothing: no reference policy without use_kl_loss / use_kl_in_reward", None, None))
    if "actor_rollout_ref.nccl_timeout" in over:
        env = preset.env.vars.get("HCCL_CONNECT_TIMEOUT")
        rows.append(("actor_rollout_ref.nccl_timeout", "HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT (env.vars); only "
                     "the critic's config reads nccl_timeout", str(over["actor_rollout_ref.nccl_timeout"]), env))
    if alg.entropy_coeff == 0 and fsdp:
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
    return [*loss_agg_checks(preset, over), *rollout_correction_checks(preset, over), *clip_checks(preset, over),
            *inert_checks(preset, over)]

"""`algorithm.rollout_correction`: verl 0.9.1's train/rollout mismatch correction as a preset option (pure, no verl).

verl's `algorithm.rollout_correction` (verl/trainer/config/algorithm.py `RolloutCorrectionConfig`,
verl/trainer/ppo/rollout_corr_helper.py) compares the rollout engine's log-probs with the trainer's and
- `rollout_is`: weights each response's loss by an importance weight pi_old / pi_rollout, per `token` or per
  `sequence` (exp of the summed token log-ratios), truncated at `rollout_is_threshold` (a float: TIS, clamp above;
  "lower_upper": IcePop, weight 0 outside the bounds);
- `rollout_rs`: rejects (masks out) tokens or whole responses whose divergence leaves `rollout_rs_threshold`
  (options `token_k1..k3`, `seq_sum_k1..k3`, `seq_mean_k1..k3`, `seq_max_k2/k3`; k1 takes ratio bounds
  "lower_upper" or one upper whose reciprocal is the lower, k2/k3 one positive upper);
- `bypass_mode`: use the rollout log-probs AS the old log-probs (no recompute pass).

Field names are verl's, so the compile step is a one-to-one table. Which combinations keep the GSPO loss, which
verl silently replaces or ignores, is judged against the trainer verl will run in `engines/verl/traps.py`
(`rollout_correction_checks`, failure signature gspo-bypass-mode), shown by `gspo train --dry-run` and `gspo plan`.
The validators mirror verl's own parsers (`_parse_rollout_is_threshold`, `_parse_rollout_rs_thresholds`);
tests/config/test_rollout_correction.py checks them against those functions.
"""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from gspo_cli.config.section import Section

# verl 0.9.1 rollout_corr_helper.py SUPPORTED_ROLLOUT_RS_OPTIONS / TOKEN_LEVEL_ROLLOUT_RS_OPTIONS
RS_OPTIONS = ("token_k1", "token_k2", "token_k3", "seq_sum_k1", "seq_sum_k2", "seq_sum_k3",
              "seq_mean_k1", "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3")
TOKEN_RS_OPTIONS = ("token_k1", "token_k2", "token_k3")


def _bounds(spec: str | float, what: str, *, pair_allowed: bool = True) -> tuple[float | None, float]:
    """(lower or None, upper) of a verl threshold spec: a positive float, or "lower_upper" with 0 < lower <= upper."""
    if isinstance(spec, bool):
        raise ValueError(f"{what} must be a number or a 'lower_upper' string, not a boolean")
    text = str(spec).strip()
    if "_" in text:
        if not pair_allowed:
            raise ValueError(f"{what} {spec!r}: this option takes one upper bound, without '_'")
        low_text, high_text = text.split("_", 1)
        try:
            low, high = float(low_text), float(high_text)
        except ValueError:
            raise ValueError(f"{what} {spec!r} is not 'lower_upper' (two numbers)") from None
        if low <= 0 or high <= 0 or low > high:
            raise ValueError(f"{what} {spec!r}: the bounds must be positive and lower <= upper")
        return low, high
    try:
        high = float(text)
    except ValueError:
        raise ValueError(f"{what} {spec!r} is not a number or a 'lower_upper' string") from None
    if high <= 0:
        raise ValueError(f"{what} {spec!r} must be positive")
    return None, high


class RolloutCorrection(Section):
    """verl's algorithm.rollout_correction. The defaults are those of verl's `RolloutCorrectionConfig` class
    (`rollout_is: sequence`, the level that matches GSPO's sequence-level objective), not of its yaml (which leaves
    `rollout_is` null: metrics only); writing the section turns the correction on."""

    # IS weight level: token | sequence | null (no weights; rejection and metrics only)
    rollout_is: Literal["token", "sequence"] | None = "sequence"
    # a float (TIS: weights clamped above it) or "lower_upper" (IcePop: weights outside set to 0). Quote a
    # "lower_upper" string in YAML: unquoted, YAML 1.1 reads 0.5_5 as the number 0.55 (underscores are digit
    # separators), which verl would take as a TIS bound.
    rollout_is_threshold: float | str = 2.0
    # normalise the (truncated) weights to mean 1 over the batch
    rollout_is_batch_normalize: bool = False
    # rejection options, comma-separated (verl's names), or null
    rollout_rs: str | None = None
    # one threshold for all options, or one per option, comma-separated
    rollout_rs_threshold: float | str | None = None
    # true: the rollout log-probs become the old log-probs (no recompute pass); see engines/verl/traps.py for
    # what verl's trainers then do with the GSPO loss and the IS / RS settings
    bypass_mode: bool = False
    # bypass mode's loss in verl's legacy trainer only (ppo_clip | reinforce)
    loss_type: Literal["ppo_clip", "reinforce"] = "ppo_clip"

    @field_validator("rollout_is_threshold")
    @classmethod
    def _is_threshold(cls, value: float | str) -> float | str:
        _bounds(value, "rollout_is_threshold")
        return value

    @field_validator("rollout_rs")
    @classmethod
    def _rs_options(cls, value: str | None) -> str | None:
        if value is None:
            return None
        options = [o.strip() for o in value.split(",") if o.strip()]
        unknown = [o for o in options if o not in RS_OPTIONS]
        if not options or unknown:
            raise ValueError(f"rollout_rs {value!r}: unknown option(s) {', '.join(unknown) or '(none given)'}; "
                             f"verl 0.9.1 accepts {', '.join(RS_OPTIONS)}")
        return ",".join(dict.fromkeys(options))  # verl drops duplicates too

    @model_validator(mode="after")
    def _rs_thresholds(self) -> RolloutCorrection:
        if self.rollout_rs is None:
            return self
        options = self.rollout_rs_options
        if self.rollout_rs_threshold is None:
            raise ValueError(f"rollout_rs {self.rollout_rs} needs rollout_rs_threshold (verl refuses it without)")
        specs = [s.strip() for s in str(self.rollout_rs_threshold).split(",") if s.strip()]
        if len(specs) not in (1, len(options)):
            raise ValueError(f"rollout_rs_threshold: give one threshold or {len(options)} (one per rollout_rs option)")
        for option, spec in zip(options, specs * len(options) if len(specs) == 1 else specs, strict=False):
            _bounds(spec, f"rollout_rs_threshold for {option}", pair_allowed=option.endswith("k1"))
        return self

    @property
    def rollout_rs_options(self) -> list[str]:
        return self.rollout_rs.split(",") if self.rollout_rs else []

    def verl_items(self) -> dict[str, object]:
        """verl key under algorithm.rollout_correction -> value, every field (what compile writes)."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    def summary(self) -> str:
        """One line: what verl will do with this setting (the trainer-dependent part is traps.py's)."""
        mode = "bypass (rollout log-probs as old log-probs)" if self.bypass_mode else "decoupled (old log-probs recomputed)"
        weights = (f"{self.rollout_is}-level IS weights, threshold {self.rollout_is_threshold}"
                   + (", batch-normalised" if self.rollout_is_batch_normalize else "")
                   if self.rollout_is else "no IS weights")
        rs = f"rejection {self.rollout_rs} at {self.rollout_rs_threshold}" if self.rollout_rs else "no rejection"
        return f"{mode}; {weights}; {rs}"


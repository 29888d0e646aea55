"""`trainer.health`: the thresholds and actions of the run-health rules (the rules are gspo_cli/metrics/health.py).

Every rule has an `action`: `warn` (an event in runs/<run>/health.jsonl and a health line under the progress
bar), `stop` (the same, then the job wrapper stops the training process; the job fails, naming the rule), or
`off`. `patience` is how many consecutive steps a rule must be violated before it fires, for rules whose metric
is noisy from step to step. A rule fires once when it starts being violated and again only after it cleared.
Rules that compare a step against a running baseline (median of earlier steps) wait for `min_history` steps.

The defaults aim at a multi-day cluster run (Qwen3-32B on 4 x 16 NPUs), where a missed problem costs hours of
64 devices and a false `stop` costs a restart; docs/health.md justifies each number.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Action = Literal["off", "warn", "stop"]


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    action: Action = "warn"
    patience: int = Field(default=1, ge=1)


class NonFiniteRule(_Rule):
    """actor/pg_loss or actor/grad_norm NaN/inf (null in metrics.jsonl): the policy is broken, stop by default."""

    action: Action = "stop"


class GradNormSpikeRule(_Rule):
    """actor/grad_norm above `factor` x the median of the previous `window` steps."""

    factor: float = Field(default=10.0, gt=1)
    window: int = Field(default=50, ge=3)
    min_history: int = Field(default=10, ge=1)


class EntropyCollapseRule(_Rule):
    """actor/entropy below `floor`, or its mean over the last `smooth` steps fallen by more than `max_drop`
    (a fraction) against the same mean `window` steps earlier."""

    floor: float = Field(default=0.02, ge=0)
    max_drop: float = Field(default=0.9, gt=0, le=1)
    window: int = Field(default=100, ge=2)
    smooth: int = Field(default=5, ge=1)


class ClipFractionRule(_Rule):
    """actor/pg_clipfrac outside [low, high]. `null` = the band of the loss mode (docs/health.md): gspo and
    gspo_token [0.02, 0.5] (the GSPO paper clips ~0.15 of tokens), vanilla token-level [0, 0.05]. The lower bound
    only applies when a step updates the policy more than once (ppo_epochs > 1 or several mini-batches): a fully
    on-policy step has ratio 1 and clips nothing, by construction."""

    low: float | None = Field(default=None, ge=0, le=1)
    high: float | None = Field(default=None, ge=0, le=1)
    patience: int = Field(default=5, ge=1)


class TruncationRule(_Rule):
    """response_length/clip_ratio (responses that hit max_response_length) above `max_ratio`."""

    max_ratio: float = Field(default=0.5, ge=0, le=1)
    patience: int = Field(default=5, ge=1)


class RolloutGapRule(_Rule):
    """training/rollout_probs_diff_mean (verl: mean |p_train - p_rollout| over response tokens) above `high`: the
    absolute band of a healthy stack (metrics/bands.py ROLLOUT_GAP: verl's nightly GSPO baselines on Ascend hold
    0.0045 and 0.0056; 0.02 is ~4x). The `mismatch` rule judges the same metric's growth over the run's start."""

    high: float = Field(default=0.02, gt=0)
    patience: int = Field(default=3, ge=1)


class EntropyRisingRule(_Rule):
    """actor/entropy above `high` and above `rise` x its early level (median of its first `baseline_steps` values
    after warm-up): entropy climbing toward noise (metrics/bands.py ENTROPY_CEILING: rllm#116, fine below 1)."""

    high: float = Field(default=1.0, gt=0)
    rise: float = Field(default=1.5, gt=1)
    baseline_steps: int = Field(default=10, ge=1)
    patience: int = Field(default=5, ge=1)


class ResponseShrinkRule(_Rule):
    """response_length/mean below `min_ratio` x its early level (median of its first `baseline_steps` values after
    warm-up): responses shrinking (metrics/bands.py RESPONSE_SHRINK: healthy math RL runs lengthen them)."""

    min_ratio: float = Field(default=0.5, gt=0, lt=1)
    baseline_steps: int = Field(default=10, ge=1)
    patience: int = Field(default=5, ge=1)


class RewardFlatRule(_Rule):
    """critic/score/mean moved less than `tolerance` (max - min) over the last `window` steps."""

    window: int = Field(default=50, ge=2)
    tolerance: float = Field(default=0.01, ge=0)


class NoSignalYetRule(_Rule):
    """Every sample of a step scored the same non-positive reward (critic/score/max - min <= `tolerance`, mean <= 0)
    for `patience` steps in a row, at a step <= `until_step`: no sample found an answer yet, so GRPO/GSPO
    advantages are 0 and there is no gradient. A note (once; again only after the reward moved for rearm_steps)."""

    patience: int = Field(default=3, ge=1)
    until_step: int = Field(default=50, ge=1)
    tolerance: float = Field(default=1e-6, ge=0)


class ValDropRule(_Rule):
    """Validation accuracy (mean of val-core/*/acc/* metrics) below its best so far by more than `max_drop`."""

    max_drop: float = Field(default=0.1, gt=0)


class ThroughputRule(_Rule):
    """perf/throughput (median of the newest `smooth` steps) below (1 - max_drop) x the median of the `window`
    steps before them."""

    max_drop: float = Field(default=0.5, gt=0, lt=1)
    window: int = Field(default=20, ge=3)
    smooth: int = Field(default=3, ge=1)  # the median of the newest `smooth` steps is compared
    min_history: int = Field(default=5, ge=1)
    patience: int = Field(default=3, ge=1)


class RewardErrorsRule(_Rule):
    """Any reward/errors or reward/timeouts in a step (a response the verifier could not score): warn at the first."""


class RewardErrorRateRule(_Rule):
    """(reward/errors + reward/timeouts) / reward/scored above `max_rate` in a step: the reward is broken, stop."""

    action: Action = "stop"
    max_rate: float = Field(default=0.05, ge=0, le=1)


class MismatchRule(_Rule):
    """training/rollout_probs_diff_mean (verl logs it with rollout.calculate_log_probs; the native engine does not
    log it yet) above `factor` x its early baseline (median of the first `baseline_steps` steps that have it), or
    training/rollout_probs_diff_max above `max_factor` x its own (the max is heavy-tailed): the train/rollout
    log-prob gap is growing (vime#64: 0.011 -> 0.036 in 30 steps on the drifting stack, flat on the other; a
    growing gap precedes collapses). Gaps below `floor` never fire (bf16 noise)."""

    factor: float = Field(default=2.0, gt=1)
    max_factor: float = Field(default=5.0, gt=1)
    baseline_steps: int = Field(default=10, ge=1)
    floor: float = Field(default=1e-3, ge=0)
    patience: int = Field(default=3, ge=1)


class GenShareRule(_Rule):
    """timing_s/gen above `max_share` of timing_s/step with the vLLM rollout in trainer.mode sync: generation (its
    long tail) dominates the step (verl#6747: 72% on 910B); the message points at `gspo plan` and the rollout
    levers. (Not trainer.rollout_share, the device split of separate_async.)"""

    max_share: float = Field(default=0.7, gt=0, lt=1)
    patience: int = Field(default=5, ge=1)


class RoutingVolatilityRule(_Rule):
    """moe/routing_flip_frac (MoE policies, native engine: the share of the experts a token was routed to under the
    rollout policy that the policy being trained routes it away from, docs/health.md) above `max_flip`. The GSPO
    paper measures about 0.10 after each update for Qwen3-30B-A3B (48 layers) and trains it stably with GSPO,
    while GRPO needed Routing Replay there; 0.3 is three times that figure."""

    max_flip: float = Field(default=0.3, gt=0, le=1)
    patience: int = Field(default=3, ge=1)


class StallRule(BaseModel):
    """No new step for max(`factor` x median step interval, `floor_s`) while the training process is alive (the
    signature of a hung collective); before the first step of an attempt the limit is `startup_s`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    action: Action = "stop"
    factor: float = Field(default=5.0, gt=1)
    floor_s: float = Field(default=1200.0, gt=0)
    startup_s: float = Field(default=3600.0, gt=0)


class HealthSection(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enable: bool = True
    # Rules on training dynamics ignore the first steps of a run (not nonfinite, not the stall watch): a base or
    # random-init model's first rollouts (truncation, throughput warming up caches) say little about the run.
    warmup_steps: int = Field(default=10, ge=0)
    # A rule that fired fires again only after it has been clear for this many steps (no event per step while a
    # metric hovers around its threshold).
    rearm_steps: int = Field(default=10, ge=1)
    nonfinite: NonFiniteRule = Field(default_factory=NonFiniteRule)
    grad_norm_spike: GradNormSpikeRule = Field(default_factory=GradNormSpikeRule)
    entropy_collapse: EntropyCollapseRule = Field(default_factory=EntropyCollapseRule)
    clip_fraction: ClipFractionRule = Field(default_factory=ClipFractionRule)
    truncation: TruncationRule = Field(default_factory=TruncationRule)
    rollout_gap: RolloutGapRule = Field(default_factory=RolloutGapRule)
    entropy_rising: EntropyRisingRule = Field(default_factory=EntropyRisingRule)
    response_shrink: ResponseShrinkRule = Field(default_factory=ResponseShrinkRule)
    reward_flat: RewardFlatRule = Field(default_factory=RewardFlatRule)
    no_signal_yet: NoSignalYetRule = Field(default_factory=NoSignalYetRule)
    val_drop: ValDropRule = Field(default_factory=ValDropRule)
    throughput: ThroughputRule = Field(default_factory=ThroughputRule)
    reward_errors: RewardErrorsRule = Field(default_factory=RewardErrorsRule)
    reward_error_rate: RewardErrorRateRule = Field(default_factory=RewardErrorRateRule)
    mismatch: MismatchRule = Field(default_factory=MismatchRule)
    gen_share: GenShareRule = Field(default_factory=GenShareRule)
    routing_volatility: RoutingVolatilityRule = Field(default_factory=RoutingVolatilityRule)
    stall: StallRule = Field(default_factory=StallRule)

    @model_validator(mode="after")
    def _band(self) -> HealthSection:
        c = self.clip_fraction
        if c.low is not None and c.high is not None and c.low > c.high:
            raise ValueError(f"health.clip_fraction.low={c.low} is above high={c.high}")
        return self


class RestartSection(BaseModel):
    """Backoff of the job wrapper's restarts (their number is trainer.max_restarts): `base_s` x 2^(k-1) before
    the k-th consecutive restart, at most `max_s`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    backoff_base_s: float = Field(default=30.0, ge=0)
    backoff_max_s: float = Field(default=600.0, ge=0)
    # Seconds between SIGTERM and SIGKILL when the wrapper stops a training process.
    kill_grace_s: float = Field(default=30.0, ge=0)
    # Count the alive nodes' device slots (the Ray resource verl places on: NPU, or GPU) before each verl attempt
    # and while one runs, and end the job with one line when they fall short (jobs/capacity.py) instead of verl
    # waiting forever for a placement group. Off for a cluster whose devices Ray names otherwise: verl then
    # finds the shortfall itself (its own count, or a wait).
    capacity_check: bool = True

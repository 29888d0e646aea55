"""Pure-torch GSPO algorithm core (no I/O): GRPO advantages, loss aggregation, the policy-loss registry.

Semantics follow verl 0.9.1's `core_algos` (checked against it in tests/algo). Import cost is torch only.
"""

from gspo_cli.algo.advantages import broadcast_to_tokens, group_index, grpo_outcome_advantages
from gspo_cli.algo.aggregation import LOSS_AGG_MODES, agg_loss, masked_mean, masked_sum
from gspo_cli.algo.losses import (
    POLICY_LOSSES,
    LossConfig,
    PolicyLossOutput,
    compute_policy_loss,
    register_policy_loss,
    sequence_log_ratio,
)

__all__ = [
    "LOSS_AGG_MODES",
    "POLICY_LOSSES",
    "LossConfig",
    "PolicyLossOutput",
    "agg_loss",
    "broadcast_to_tokens",
    "compute_policy_loss",
    "group_index",
    "grpo_outcome_advantages",
    "masked_mean",
    "masked_sum",
    "register_policy_loss",
    "sequence_log_ratio",
]

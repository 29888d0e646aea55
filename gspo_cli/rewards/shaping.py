"""Reward shaping. Pure functions.

DAPO's soft overlong penalty, exactly as verl's `dapo` reward manager computes it
(verl/workers/reward_manager/dapo.py): responses longer than `max_resp_len - overlong_buffer_len` lose up to
`penalty_factor`, linearly across the buffer, and more beyond it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gspo_cli.config.schema import OverlongPenalty


def overlong_penalty(
    valid_response_length: int, max_resp_len: int, overlong_buffer_len: int, penalty_factor: float
) -> float:
    """min(-(L - (max_resp_len - buffer)) / buffer * factor, 0): 0 inside the budget, negative past it."""
    if overlong_buffer_len <= 0:
        raise ValueError(f"overlong_buffer_len must be positive, got {overlong_buffer_len}")
    if max_resp_len < overlong_buffer_len:
        raise ValueError(f"max_resp_len ({max_resp_len}) must be >= overlong_buffer_len ({overlong_buffer_len})")
    expected_len = max_resp_len - overlong_buffer_len
    exceed_len = valid_response_length - expected_len
    return min(-exceed_len / overlong_buffer_len * penalty_factor, 0)


def overlong_penalty_for(valid_response_length: int, max_resp_len: int, cfg: OverlongPenalty | None) -> float:
    """The penalty under a preset's `algorithm.overlong_penalty` section (enable, buffer_len, penalty_factor)."""
    if cfg is None or not getattr(cfg, "enable", False):
        return 0.0
    return overlong_penalty(valid_response_length, max_resp_len, cfg.buffer_len, cfg.penalty_factor)

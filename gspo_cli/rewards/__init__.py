"""The answer verifier: one reward for training (both engines) and evaluation.

verl loads it as `custom_reward_function.path=pkg://gspo_cli.rewards.verl_entry` (name `compute_score`) when
`reward.verifier` is gspo; `choice.py` holds that choice.
"""

from gspo_cli.rewards.batch import score_batch
from gspo_cli.rewards.extract import extract, extract_answer
from gspo_cli.rewards.normalize import normalize
from gspo_cli.rewards.score import SCORERS, compute_score, get_scorer, judge, verdict
from gspo_cli.rewards.shaping import overlong_penalty, overlong_penalty_for

__all__ = [
    "compute_score",
    "extract",
    "extract_answer",
    "get_scorer",
    "judge",
    "normalize",
    "overlong_penalty",
    "overlong_penalty_for",
    "SCORERS",
    "score_batch",
    "verdict",
]

"""`gspo eval` scores with the preset's reward.verifier, so eval accuracy is what training rewarded (issue #12)."""

from __future__ import annotations

from types import SimpleNamespace

import verl as _verl  # noqa: F401  (verl is a dev dependency: without it this module errors, never skips)

from gspo_cli.rewards import score_batch
from gspo_cli.rewards.backends import scorer_for

# A prose conclusion after </think>: gspo's verifier credits it, verl's math_dapo reads only `Answer:` lines.
PROSE = "<think>6*7</think> The answer is 42."
ANSWER_LINE = "<think>6*7</think>\nAnswer: 42"


def _preset(verifier: str):
    return SimpleNamespace(reward=SimpleNamespace(verifier=verifier))


def _items(response: str) -> list[dict]:
    return [{"data_source": "math_dapo", "solution_str": response, "ground_truth": "42", "extra_info": {}}]


def test_verl_choice_scores_as_verl_does():
    from verl.utils.reward_score import default_compute_score

    scorer = scorer_for(_preset("verl"))
    for response in (PROSE, ANSWER_LINE, "Answer: 41"):
        (got,) = score_batch(_items(response), workers=0, scorer=scorer)
        expected = default_compute_score("math_dapo", response, "42")
        assert got["score"] == expected["score"] and got["acc"] == bool(expected["acc"]), response
        assert got["error"] is None


def test_gspo_choice_and_no_preset_use_gspos_verifier():
    assert scorer_for(None) is None and scorer_for(_preset("gspo")) is None
    (gspo,) = score_batch(_items(PROSE), workers=0, scorer=scorer_for(_preset("gspo")))
    (verl,) = score_batch(_items(PROSE), workers=0, scorer=scorer_for(_preset("verl")))
    assert gspo["acc"] is True and verl["acc"] is False  # the two choices really differ on this shape

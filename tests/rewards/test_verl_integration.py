"""verl loads our reward by file path, and our overlong penalty equals its `dapo` reward manager's."""

from __future__ import annotations

from pathlib import Path

import pytest

import gspo_cli.rewards
from gspo_cli.rewards import overlong_penalty

ENTRY = Path(gspo_cli.rewards.__file__).parent / "verl_entry.py"


def test_verl_loads_compute_score_by_path():
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    cfg = OmegaConf.create({"reward": {"custom_reward_function": {"path": str(ENTRY), "name": "compute_score"}}})
    fn = get_custom_reward_fn(cfg)
    assert fn(data_source="math_dapo", solution_str="x</think>\n**Answer:** 033", ground_truth="33", extra_info={}) == {
        "score": 1.0,
        "acc": True,
        "pred": "33",
        "reward_errors": 0.0,  # counted per response (issue #22), so verl's dumps and val metrics carry them
        "reward_timeouts": 0.0,
    }
    assert fn(data_source="aime24", solution_str="\\boxed{34}", ground_truth="33", extra_info=None)["acc"] is False


class _Tok:
    """The two tokenizer members DAPORewardManager touches: each response id decodes to one fixed text."""

    eos_token = "<eos>"

    def __init__(self, texts):
        self.texts = texts

    def decode(self, ids, skip_special_tokens=True):
        ids = ids.tolist()
        return self.texts[ids[0]] if ids and ids[0] >= 0 else ""


@pytest.mark.parametrize("buffer_len,factor", [(4, 1.0), (8, 0.5), (16, 2.0)])
def test_overlong_penalty_matches_verl_dapo_manager(buffer_len, factor):
    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.workers.reward_manager.dapo import DAPORewardManager

    from gspo_cli.rewards import compute_score

    max_resp = 24
    lengths = list(range(1, max_resp + 1))
    texts = ["Answer: 5", "Answer: 6"]
    n = len(lengths)
    prompt_len = 3
    responses = torch.full((n, max_resp), -1, dtype=torch.long)
    attn = torch.zeros((n, prompt_len + max_resp), dtype=torch.long)
    attn[:, :prompt_len] = 1
    for i, L in enumerate(lengths):
        responses[i, :L] = i % 2
        attn[i, prompt_len : prompt_len + L] = 1
    data = DataProto.from_dict(
        tensors={
            "prompts": torch.zeros((n, prompt_len), dtype=torch.long),
            "responses": responses,
            "attention_mask": attn,
        },
        non_tensors={
            "data_source": np.array(["math_dapo"] * n, dtype=object),
            "reward_model": np.array([{"ground_truth": "5"}] * n, dtype=object),
            "extra_info": np.array([{} for _ in range(n)], dtype=object),
        },
    )
    cfg = OmegaConf.create({"enable": True, "len": buffer_len, "penalty_factor": factor, "log": False})
    mgr = DAPORewardManager(
        tokenizer=_Tok(texts),
        num_examine=0,
        compute_score=compute_score,
        max_resp_len=max_resp,
        overlong_buffer_cfg=cfg,
    )
    out = mgr(data, return_dict=True)["reward_tensor"]
    for i, L in enumerate(lengths):
        base = 1.0 if i % 2 == 0 else -1.0
        ours = base + overlong_penalty(L, max_resp, buffer_len, factor)
        assert out[i, L - 1].item() == pytest.approx(ours, abs=1e-6), (L, buffer_len, factor)


def test_overlong_penalty_from_the_preset_section():
    from gspo_cli.config.schema import OverlongPenalty
    from gspo_cli.rewards import overlong_penalty_for

    assert overlong_penalty_for(1000, 1000, OverlongPenalty()) == 0.0  # disabled by default
    cfg = OverlongPenalty(enable=True, buffer_len=200, penalty_factor=0.5)
    assert overlong_penalty_for(900, 1000, cfg) == overlong_penalty(900, 1000, 200, 0.5) == pytest.approx(-0.25)


def test_overlong_penalty_values_and_checks():
    assert overlong_penalty(100, 1000, 200, 1.0) == 0
    assert overlong_penalty(900, 1000, 200, 1.0) == pytest.approx(-0.5)
    assert overlong_penalty(1000, 1000, 200, 1.0) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        overlong_penalty(1, 10, 0, 1.0)
    with pytest.raises(ValueError):
        overlong_penalty(1, 10, 20, 1.0)

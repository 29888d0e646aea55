"""Scoring the native trainer's responses: the reward of a training batch and the validation metrics.

Both score with the reward registry, picked by each row's data_source (plus DAPO's overlong penalty when the
preset enables it); validation reports verl's metric names (`val-core/<source>/acc/mean@N`,
`val-aux/<source>/reward/mean@N`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import torch

from gspo_cli.engines.native.rollout import RolloutBatch, Sampling, generate

if TYPE_CHECKING:
    from gspo_cli.config.schema import OverlongPenalty


def score_responses(rows: list[dict], batch: RolloutBatch, overlong: OverlongPenalty | None = None, max_len: int = 0
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """(scores [B], acc [B]) from the reward registry, picked by each row's data_source.

    With `overlong` (the preset's algorithm.overlong_penalty) enabled, DAPO's soft overlong penalty on the
    response length (EOS included, as verl counts it) is added to the score, as verl's dapo reward manager does;
    `acc` is the verifier's verdict alone.
    """
    from gspo_cli.rewards import compute_score
    from gspo_cli.rewards.shaping import overlong_penalty_for

    lengths = batch.response_mask.sum(-1).long().tolist()
    scores, accs = [], []
    for text, i, length in zip(batch.texts, batch.row_index, lengths, strict=True):
        row = rows[i]
        out = compute_score(row["data_source"], text, str(row["reward_model"]["ground_truth"]), row.get("extra_info"))
        scores.append(float(out["score"]) + overlong_penalty_for(length, max_len, overlong))
        accs.append(float(bool(out.get("acc", out["score"] > 0))))
    return torch.tensor(scores), torch.tensor(accs)


@torch.no_grad()
def validation_metrics(model, tokenizer, val_rows: list[dict], sampling: Sampling, device: torch.device, *, n: int,
                       sequences_per_batch: int, overlong: OverlongPenalty | None) -> dict[str, float]:
    """`n` responses to every validation row, `sequences_per_batch` at a time: mean acc and reward per source."""
    by_source: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    bs = max(1, sequences_per_batch // n)
    for start in range(0, len(val_rows), bs):
        rows = val_rows[start:start + bs]
        batch = generate(model, tokenizer, rows, sampling, device, n=n)
        scores, accs = score_responses(rows, batch, overlong, sampling.max_tokens)
        for j, i in enumerate(batch.row_index):
            src = rows[i]["data_source"]
            by_source[src]["acc"].append(accs[j].item())
            by_source[src]["reward"].append(scores[j].item())
    out = {}
    for src, vals in by_source.items():
        out[f"val-core/{src}/acc/mean@{n}"] = sum(vals["acc"]) / len(vals["acc"])
        out[f"val-aux/{src}/reward/mean@{n}"] = sum(vals["reward"]) / len(vals["reward"])
    return out

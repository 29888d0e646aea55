"""Routing metrics of one native training step on a Mixture-of-Experts policy (docs/health.md "MoE routing
metrics" defines each; the comparisons are algo/routing.py, the hooks models/moe.py).

The probe runs its own no-grad forward passes over whole prompt+response sequences (so every pass sees the
same positions in the same layout), next to the trainer's:
- `start_step`: right after the rollout, the policy that generated is pi_old: its routing of every sequence of
  the batch and its log-probs of the response tokens (one forward over the batch);
- `before_update(rows)`: the policy about to be updated on mini-batch `rows` (after the step's earlier updates):
  its routing and log-probs, and its log-probs with routing replayed from pi_old (two forwards over `rows`);
- `after_update(rows)`: the same policy after the optimizer step on `rows`: its routing (one forward).
`metrics()` then gives the step's figures in verl's metric style:

| metric | what |
|---|---|
| `moe/routing_flip_frac` | expert flip fraction pi_old -> the policy being trained, over the mini-batches trained after the step's first update (those the policy has moved for; absent with one update per step), at the positions that score the response tokens |
| `moe/routing_flip_frac_max` | the largest of those per mini-batch (usually the step's last) |
| `moe/routing_changed_frac` | (position, layer) pairs whose expert set changed at all, same positions |
| `moe/routing_token_changed_frac` | positions whose expert set changed in at least one layer, same mini-batches |
| `moe/routing_flip_frac_update` | expert flip fraction across one optimizer update (before vs after it, on the mini-batch it trained), mean over the step's updates |
| `moe/routing_flip_frac_random` | 1 - k/E: what routing at random would flip (the scale of the three above) |
| `moe/logprob_gap`, `moe/logprob_gap_replay` | mean_t abs(logp - logp_old) of the policy being trained, free routing / pi_old's routes replayed |
| `moe/router_gap_share` | 1 - logprob_gap_replay / logprob_gap: the router's share of the token log-prob gap |
| `moe/seq_logratio_gap`, `moe/seq_logratio_gap_replay`, `moe/router_seq_gap_share` | the same for GSPO's sequence log-ratio abs(log s_i) |
| `moe/load_cv`, `moe/load_cv_max` | coefficient of variation of tokens per expert under pi_old (the rollout policy), mean and max over layers |
| `rollout/moe/max_vio/max`, `/avg`; `min_vio/...`; `avg_vio/...` | verl's rollout load-balance figures (verl/trainer/ppo/metric_utils.py), same definition and token convention: response tokens as inputs, each sequence's last one excluded |

Costs: one forward over the batch per step, three per mini-batch over its rows (the update itself is one forward
and one backward); figures only for `trainer.routing_metrics_freq` steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING

import torch

from gspo_cli.algo import routing
from gspo_cli.models import moe

if TYPE_CHECKING:
    from gspo_cli.engines.native.rollout import RolloutBatch


class RoutingProbe:
    def __init__(self, model, temperature: float, clock: Callable[[], float] = time.perf_counter) -> None:
        self.model = model
        self.temperature = temperature
        self.clock = clock  # the trainer's step clock: the probe's time inside the update is taken out of it
        self.seconds = 0.0
        self.layers, self.num_experts, self.k = moe.moe_shape(model)
        self._reset()

    @classmethod
    def for_model(cls, model, temperature: float, clock: Callable[[], float] = time.perf_counter
                  ) -> RoutingProbe | None:
        """A probe for an MoE policy whose router gspo knows (models/moe.py), else None."""
        return cls(model, temperature, clock) if moe.is_moe(model) else None

    def take_seconds(self) -> float:
        """Seconds spent in before_update / after_update since the last call."""
        spent, self.seconds = self.seconds, 0.0
        return spent

    def _reset(self) -> None:
        self.batch: RolloutBatch | None = None
        self.old_routes: torch.Tensor | None = None  # [B, P+R, L, k]
        self.old_logp: torch.Tensor | None = None  # [B, R]
        self.before: torch.Tensor | None = None  # routing of the current mini-batch before its update
        self.updates = 0
        self.moved = routing.FlipCounts()
        self.moved_max: float | None = None
        self.per_update = routing.FlipCounts()
        self.gaps = routing.GapSums()
        self.load: dict[str, torch.Tensor] = {}

    @torch.no_grad()
    def _forward(self, batch: RolloutBatch, rows: torch.Tensor, replay_from: torch.Tensor | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probs [b, R] of the response tokens of `rows` and their routing [b, P+R-1, L, k] (every input
        position: the prompt, then the response tokens but the last, which is never fed back). With `replay_from`
        ([b, P+R-1, L, k]) every routing decision is forced to it (and returned as given).

        Each distinct prompt runs once and its KV cache fans out to its responses, as the trainer's
        `response_log_probs` does: the prompt's routing is the same for all its responses under one policy."""
        from gspo_cli.engines.native.rollout import _log_probs_from_logits

        P, R = batch.prompt_len, batch.responses.shape[1]
        groups = torch.as_tensor(batch.row_index, device=rows.device)[rows]
        uniq, inverse = torch.unique(groups, return_inverse=True)
        order = torch.arange(len(rows), device=rows.device)
        first = torch.full((len(uniq),), len(rows), device=rows.device).scatter_reduce(0, inverse, order, "amin")
        p_rows = rows[first]
        rec: moe.Capture | None = None
        with ExitStack() as stack:
            if replay_from is not None:
                calls = [replay_from[first, :P].reshape(-1, self.layers, self.k)]
                if R > 1:
                    calls.append(replay_from[:, P:].reshape(-1, self.layers, self.k))
                stack.enter_context(moe.replay(self.model, calls))
            else:
                rec = stack.enter_context(moe.capture(self.model))
            prefix = self.model(input_ids=batch.input_ids[p_rows, :P], attention_mask=batch.attention_mask[p_rows, :P],
                                position_ids=batch.position_ids[p_rows, :P], use_cache=R > 1)
            logits = prefix.logits[:, -1][inverse].unsqueeze(1)  # predicts response token 0
            if R > 1:
                cache = prefix.past_key_values
                cache.batch_select_indices(inverse)
                rest = self.model(input_ids=batch.responses[rows, :-1],
                                  attention_mask=batch.attention_mask[rows, :P + R - 1],
                                  position_ids=batch.position_ids[rows, P:P + R - 1], past_key_values=cache,
                                  use_cache=True)
                logits = torch.cat([logits, rest.logits], dim=1)
        logp, _ = _log_probs_from_logits(logits, batch.responses[rows], self.temperature, False)
        if rec is None:
            assert replay_from is not None
            return logp, replay_from
        passes = rec.calls()
        routes = passes[0].view(len(uniq), P, self.layers, self.k)[inverse]
        if R > 1:
            routes = torch.cat([routes, passes[1].view(len(rows), R - 1, self.layers, self.k)], dim=1)
        return logp, routes

    def _scoring(self, routes: torch.Tensor) -> torch.Tensor:
        assert self.batch is not None
        return routing.shift_to_scoring_positions(routes, self.batch.prompt_len, self.batch.responses.shape[1])

    def start_step(self, batch: RolloutBatch) -> None:
        """pi_old's routing and log-probs of the whole batch (call right after the rollout)."""
        self._reset()
        self.batch = batch
        rows = torch.arange(len(batch), device=batch.responses.device)
        self.old_logp, self.old_routes = self._forward(batch, rows)
        P = batch.prompt_len
        # response tokens as inputs: positions P.. (the last response token has no routing, as in verl)
        mask = routing.verl_load_mask(batch.response_mask)[:, :self.old_routes.shape[1] - P]
        counts = routing.expert_load(self.old_routes[:, P:], mask, self.num_experts)
        self.load = routing.load_balance(counts)

    def before_update(self, rows: torch.Tensor) -> None:
        """The policy about to be updated on `rows`: flips and log-prob gap against pi_old (after the step's
        first update), and its routing, kept for `after_update`."""
        batch, old_routes, old_logp = self.batch, self.old_routes, self.old_logp
        assert batch is not None and old_routes is not None and old_logp is not None, "start_step first"
        started = self.clock()
        try:
            self._before_update(batch, old_routes, old_logp, rows)
        finally:
            self.seconds += self.clock() - started

    def _before_update(self, batch: RolloutBatch, old_routes: torch.Tensor, old_logp: torch.Tensor,
                       rows: torch.Tensor) -> None:
        logp, routes = self._forward(batch, rows)
        self.before = routes
        if self.updates == 0:
            return  # the policy has not moved yet in this step: pi_old itself
        mask = batch.response_mask[rows]
        flips = routing.routing_flips(self._scoring(old_routes[rows]), self._scoring(routes), mask)
        self.moved = self.moved + flips
        if flips.flip_frac is not None:
            self.moved_max = max(self.moved_max or 0.0, flips.flip_frac)
        replayed, _ = self._forward(batch, rows, replay_from=old_routes[rows])
        self.gaps = self.gaps + routing.GapSums.of(logp, replayed, old_logp[rows], mask)

    def after_update(self, rows: torch.Tensor) -> None:
        """The same rows after the optimizer step: how many routing decisions that one update changed."""
        assert self.batch is not None and self.before is not None, "before_update first"
        started = self.clock()
        _, routes = self._forward(self.batch, rows)
        self.seconds += self.clock() - started
        self.per_update = self.per_update + routing.routing_flips(
            self._scoring(self.before), self._scoring(routes), self.batch.response_mask[rows])
        self.before = None
        self.updates += 1

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {"moe/routing_flip_frac_random": routing.random_flip_frac(self.num_experts, self.k)}
        named = {
            "moe/routing_flip_frac": self.moved.flip_frac,
            "moe/routing_flip_frac_max": self.moved_max,
            "moe/routing_changed_frac": self.moved.changed_frac,
            "moe/routing_token_changed_frac": self.moved.token_changed_frac,
            "moe/routing_flip_frac_update": self.per_update.flip_frac,
            "moe/logprob_gap": self.gaps.token_gap,
            "moe/logprob_gap_replay": self.gaps.token_gap_replay,
            "moe/router_gap_share": self.gaps.router_share,
            "moe/seq_logratio_gap": self.gaps.seq_gap,
            "moe/seq_logratio_gap_replay": self.gaps.seq_gap_replay,
            "moe/router_seq_gap_share": self.gaps.router_seq_share,
        }
        out.update({k: v for k, v in named.items() if v is not None})
        if self.load:
            out["moe/load_cv"] = float(self.load["cv"].mean())
            out["moe/load_cv_max"] = float(self.load["cv"].max())
            for name in ("max_vio", "min_vio", "avg_vio"):
                values = self.load[name]
                out[f"rollout/moe/{name}/max"] = float(values.max())
                out[f"rollout/moe/{name}/avg"] = float(values.mean())
        return out

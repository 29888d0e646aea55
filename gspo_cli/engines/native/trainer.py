"""The native GSPO training loop (one process, one device): the readable reference of the algorithm.

Run it:
    gspo prepare-data --preset tiny && gspo train --preset tiny        # a Ray job on the embedded local head
    gspo train --preset tiny --local                                     # the same job in this process
(the job wrapper, gspo_cli/engines/native/job.py, runs this module's `train` in a child process and watches it).

One step (`NativeTrainer.train_step`) is one iteration of the GSPO algorithm, in verl's order and names:
  1. sample_prompts: `data.train_batch_size` prompts;
  2. rollout:        G = `rollout.n` responses per prompt from the current policy (HF `generate`), which is
                     pi_old for the rest of the step;
  3. reward:         each response scored by the reward registry for its row's data_source (+ DAPO overlong
                     penalty);
  4. old_log_probs:  log pi_old(y_i,t) of every response token, taken once before any update;
  5. advantages:     GRPO outcome advantage A_i = (r_i - mean of its group) / std of its group, on every token;
  6. update_policy:  `actor.ppo_epochs` x mini-batches of `actor.ppo_mini_batch_size` prompts, one AdamW step each
                     (grad clipping, LR warmup), maximising the GSPO objective below.
The GSPO loss (Zheng et al. 2025, arXiv:2507.18071) with `algorithm.loss_mode: gspo`: per response i, the
sequence importance ratio s_i = exp(mean_t [log pi(y_i,t) - log pi_old(y_i,t)]) (a length-normalised geometric
mean), and loss = -mean_i min(s_i A_i, clip(s_i, 1 - clip_ratio_low, 1 + clip_ratio_high) A_i); the paper's clip
range is 3e-4 / 4e-4. On the first mini-batch s_i = 1; each later one sees a policy that has already moved, so
s_i drifts from 1 (`actor/seq_ratio_mean`) and the clip drops sequences whose ratio left the range in the
direction of their advantage (`actor/pg_clipfrac`). `gspo_token` and `vanilla` (token-level PPO/GRPO) are the
registry's other entries.
Validation every `test_freq` steps and checkpoints every `save_freq` steps, both also on the last step (verl's
rule, engines/schedule.py); metrics in verl's names and file format (metrics.jsonl); automatic resume from the
newest complete checkpoint (resume.py). Responses are scored, and validated, by scoring.py.

Simplifications against verl (each keeps the loss semantics the tests check against verl's own functions):
  - no reference model: no KL loss or KL-in-reward (GSPO's recipe uses neither);
  - GRPO advantages only (no critic, no GAE);
  - prompts longer than data.max_prompt_length are truncated on the left only (or refused);
  - rollout is HF `generate` on the training model itself (no vLLM, no separate inference engine);
  - one device, no sequence packing, no dynamic batch sizes, no Ulysses sequence parallelism.
Fault injection for tests (GSPO_FAULT=KIND@STEP) subclasses this trainer from outside: gspo_cli/engines/native/faults.py.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import torch

from gspo_cli.algo.advantages import broadcast_to_tokens, grpo_outcome_advantages
from gspo_cli.algo.aggregation import agg_loss
from gspo_cli.algo.losses import PolicyLossOutput, compute_policy_loss
from gspo_cli.data.manifest import train_file, val_file
from gspo_cli.engines import schedule
from gspo_cli.engines.native import checkpoint, resume
from gspo_cli.engines.native.data import Cursor, PromptSampler, load_rows
from gspo_cli.engines.native.rollout import RolloutBatch, Sampling, generate, response_log_probs
from gspo_cli.engines.native.routing_probe import RoutingProbe
from gspo_cli.engines.native.scoring import score_responses, validation_metrics
from gspo_cli.engines.native.step_metrics import data_metrics, rollout_probs_diff
from gspo_cli.engines.native.trackers import TrackedMetrics
from gspo_cli.jobs import events
from gspo_cli.models.device import resolve_device
from gspo_cli.models.loading import load_model, load_tokenizer, resolve_preset_model
from gspo_cli.rewards.guard import TALLY as REWARD_TALLY

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


@contextmanager
def _timer(timing: dict, clock, name: str):
    start = clock()
    try:
        yield
    finally:
        timing[f"timing_s/{name}"] = timing.get(f"timing_s/{name}", 0.0) + clock() - start


def constant_with_warmup(optimizer: torch.optim.Optimizer, warmup: int) -> torch.optim.lr_scheduler.LambdaLR:
    """verl's default LR schedule: linear warmup from 0 over `warmup` steps, then constant (stepped per step)."""
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, s / warmup) if warmup > 0 else 1.0)


class Normalisers(TypedDict):
    """The mini-batch totals each micro-batch's loss is normalised by (agg_loss's keywords)."""

    batch_num_tokens: torch.Tensor
    global_batch_size: torch.Tensor


class NativeTrainer:
    clock = staticmethod(time.perf_counter)  # the step timer's clock (timing_s/*, perf/*)

    def __init__(self, preset: Preset, run_dir: Path) -> None:
        self.preset = preset
        self.run_dir = Path(run_dir)
        trainer, actor, rollout = preset.trainer, preset.actor, preset.rollout
        self.device = resolve_device(trainer.device if trainer.device != "auto" else preset.cluster.device)
        if self.device.type == "cpu" and trainer.cpu_threads:
            torch.set_num_threads(trainer.cpu_threads)
        self.seed = trainer.seed
        random.seed(self.seed)
        torch.manual_seed(self.seed)

        self.train_rows = load_rows(train_file(preset))
        self.val_rows = load_rows(val_file(preset)) if trainer.test_freq > 0 or trainer.val_before_train else []
        path = resolve_preset_model(preset)  # a pinned hub model: its prepared folder (models/hub_model.py)
        self.tokenizer = load_tokenizer(path, preset.model.trust_remote_code)
        self.model = load_model(path, preset.model.dtype, self.device, preset.model.trust_remote_code)
        if preset.model.enable_gradient_checkpointing:
            self.model.gradient_checkpointing_enable()
        self.model.train()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=actor.lr, weight_decay=actor.weight_decay)
        self.scheduler = constant_with_warmup(self.optimizer, actor.lr_warmup_steps)

        data_seed = self.seed if preset.data.seed is None else preset.data.seed  # verl's data.seed, compiled alike
        self.sampler = PromptSampler(len(self.train_rows), preset.data.train_batch_size, data_seed,
                                     preset.data.shuffle)
        self.total_steps = trainer.total_training_steps or trainer.total_epochs * self.sampler.steps_per_epoch
        self.sampling = Sampling(rollout.temperature, rollout.top_p, rollout.top_k, preset.data.max_response_length)
        val = rollout.val
        self.val_n = val.n  # validation responses per prompt; do_sample=false is greedy (temperature 0)
        self.val_sampling = Sampling(val.temperature if val.do_sample else 0.0, val.top_p, val.top_k,
                                     preset.data.max_response_length)
        self.metrics = TrackedMetrics(preset, self.run_dir)  # metrics.jsonl + trainer.loggers' trackers
        self.step = 0
        # MoE policies: routing metrics (moe/*, rollout/moe/*) every trainer.routing_metrics_freq steps
        # (routing_probe.py); None for a dense model.
        self.routing = RoutingProbe.for_model(self.model, self.sampling.temperature, self.clock)
        self.probe: RoutingProbe | None = None  # the probe of the running step, when it measures this step

    # ------------------------------------------------------------------ resume / save
    def maybe_resume(self) -> int | None:
        latest = resume.checkpoint_to_resume(self.run_dir, self.preset.trainer.resume_mode, self.metrics)
        if latest is None:
            return None
        state = resume.restore(latest, self.model, self.optimizer, self.scheduler, self.device)
        self.sampler.cursor = Cursor(**state["cursor"])
        self.step = int(state["step"])
        dropped = self.metrics.truncate_after(self.step)
        events.message(f"resumed from {latest} (step {self.step}); dropped {dropped} metric line(s) after it")
        return self.step

    def save(self) -> None:
        """Write this step's checkpoint, then apply trainer.max_ckpt_to_keep, saying which ones it deleted."""
        c = self.sampler.cursor
        t0 = time.perf_counter()
        checkpoint.save(self.run_dir, self.step, self.model, self.tokenizer, self.optimizer, self.scheduler,
                        {"epoch": c.epoch, "position": c.position}, keep=None)
        keep = self.preset.trainer.max_ckpt_to_keep
        pruned = checkpoint.prune(self.run_dir, keep) if keep else []
        note = (f"; deleted {', '.join(f'global_step_{s}' for s in pruned)} (trainer.max_ckpt_to_keep={keep})"
                if pruned else "")
        events.message(f"checkpoint global_step_{self.step} saved ({time.perf_counter() - t0:.2f}s){note}")

    # ------------------------------------------------------------------ validation
    def validate(self) -> dict[str, float]:
        return validation_metrics(self.model, self.tokenizer, self.val_rows, self.val_sampling, self.device,
                                  n=self.val_n, sequences_per_batch=self.preset.trainer.val_sequences_per_batch,
                                  overlong=self.preset.algorithm.overlong_penalty)

    # ------------------------------------------------------------------ one step: the algorithm box
    def train_step(self) -> dict[str, float]:
        """One iteration of GSPO (the paper's algorithm, in verl's order); returns the step's metrics."""
        timing: dict[str, float] = {}
        timed = partial(_timer, timing, self.clock)
        with timed("step"):
            rows = self.sample_prompts()  # 1. a batch of prompts
            with timed("gen"):
                batch = self.rollout(rows)  # 2. G = rollout.n responses per prompt from the current policy
            measured = (self.step + 1) % self.preset.trainer.routing_metrics_freq == 0
            self.probe = self.routing if measured else None
            if self.probe is not None:
                with timed("routing_probe"):
                    self.probe.start_step(batch)  # MoE: pi_old's routing of the batch
            with timed("reward"):
                scores, accs, reward_counts = self.reward(rows, batch)  # 3. a reward per response
            with timed("old_log_prob"):
                old_log_probs = self.old_log_probs(batch)  # 4. log pi_old(y_i,t), fixed for the whole step
            with timed("adv"):
                token_advantages = self.advantages(scores, batch)  # 5. A_i, group-relative
            with timed("update_actor"):
                actor = self.update_policy(batch, old_log_probs, token_advantages)  # 6. maximise the objective
            self.scheduler.step()
            routing_metrics = self._routing_metrics(timing)
        return {**actor, **reward_counts, **routing_metrics,
                **self.batch_metrics(batch, scores, accs, token_advantages, old_log_probs, timing)}

    def _routing_metrics(self, timing: dict[str, float]) -> dict[str, float]:
        """The probe's figures of this step; its passes inside the update count as timing_s/routing_probe, not as
        timing_s/update_actor (which the planner's calibration reads)."""
        if self.probe is None:
            return {}
        inside = self.probe.take_seconds()
        timing["timing_s/update_actor"] -= inside
        timing["timing_s/routing_probe"] = timing.get("timing_s/routing_probe", 0.0) + inside
        return self.probe.metrics()

    def sample_prompts(self) -> list[dict]:
        return [self.train_rows[i] for i in self.sampler.next_batch()]

    def rollout(self, rows: list[dict]) -> RolloutBatch:
        data = self.preset.data
        return generate(self.model, self.tokenizer, rows, self.sampling, self.device, data.max_prompt_length,
                        truncation=data.truncation, n=self.preset.rollout.n)

    def reward(self, rows: list[dict], batch: RolloutBatch) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
        """(scores, accs, reward/errors and reward/timeouts: what the reward layer counted while scoring)."""
        counted = REWARD_TALLY.snapshot()
        scores, accs = score_responses(rows, batch, self.preset.algorithm.overlong_penalty, self.sampling.max_tokens)
        return scores, accs, REWARD_TALLY.since(counted)

    @torch.no_grad()
    def old_log_probs(self, batch: RolloutBatch) -> torch.Tensor | None:
        """None on a single pass: the update's own first forward is the old policy (see `update_policy`)."""
        if self.single_pass(len(batch)):
            return None
        return response_log_probs(self.model, batch, self.sampling.temperature)[0]

    def advantages(self, scores: torch.Tensor, batch: RolloutBatch) -> torch.Tensor:
        """GRPO: (score - group mean) / group std per response, the same on each of its tokens."""
        advantages = grpo_outcome_advantages(scores.to(self.device), batch.row_index,
                                             norm_by_std=self.preset.algorithm.norm_adv_by_std_in_grpo)
        return broadcast_to_tokens(advantages, batch.response_mask)

    def single_pass(self, batch_size: int) -> bool:
        """One epoch of one mini-batch: the policy is updated once, after every log-prob of the step is taken."""
        actor = self.preset.actor
        return actor.ppo_epochs == 1 and actor.ppo_mini_batch_size * self.preset.rollout.n >= batch_size

    def update_policy(self, batch: RolloutBatch, old_log_probs: torch.Tensor | None, token_advantages: torch.Tensor
                      ) -> dict[str, float]:
        """ppo_epochs x mini-batches (each one optimizer step) of the policy loss; the mean of each metric.

        With more than one mini-batch, every mini-batch after the first is scored by a policy that has already
        moved: its ratio s_i leaves 1 and the clip decides which sequences still push (actor/pg_clipfrac).
        `old_log_probs` None means a single pass: the old policy IS the current one when each micro-batch's
        forward runs (no update has happened yet in this step), so that forward's detached log-probs are the old
        log-probs, bit for bit what a separate no-grad pass would give, without the extra forward.
        """
        actor = self.preset.actor
        batch_size = len(batch)
        mini_batch_size = actor.ppo_mini_batch_size * self.preset.rollout.n  # verl: the mini-batch counts prompts
        collected: dict[str, list[float]] = defaultdict(list)
        for _epoch in range(actor.ppo_epochs):
            for first in range(0, batch_size, mini_batch_size):
                rows = torch.arange(first, min(first + mini_batch_size, batch_size), device=self.device)
                self.update_mini_batch(batch, rows, old_log_probs, token_advantages, collected)
        out = {name: sum(vals) / len(vals) for name, vals in collected.items()}
        out["actor/lr"] = self.optimizer.param_groups[0]["lr"]
        return out

    def update_mini_batch(self, batch: RolloutBatch, rows: torch.Tensor, old_log_probs: torch.Tensor | None,
                          token_advantages: torch.Tensor, collected: dict[str, list[float]]) -> None:
        """One optimizer step over `rows`, accumulated over micro-batches of ppo_micro_batch_size_per_device."""
        actor, algorithm = self.preset.actor, self.preset.algorithm
        response_mask = batch.response_mask
        micro_batch_size = actor.ppo_micro_batch_size_per_device or len(rows)
        # Normalise by the whole mini-batch, so micro-batch losses add up to the mini-batch loss (verl).
        mini_mask = response_mask[rows]
        normalisers: Normalisers = dict(batch_num_tokens=mini_mask.sum().clamp(min=1),
                           global_batch_size=(mini_mask.sum(-1) > 0).sum().clamp(min=1).float())
        if self.probe is not None:
            self.probe.before_update(rows)
        self.optimizer.zero_grad(set_to_none=True)
        for first in range(0, len(rows), micro_batch_size):
            micro = rows[first:first + micro_batch_size]
            log_probs, entropy = response_log_probs(self.model, batch, self.sampling.temperature, micro,
                                                    with_entropy=True)
            old = log_probs.detach() if old_log_probs is None else old_log_probs[micro]
            policy = self.policy_loss(log_probs, old, token_advantages[micro], response_mask[micro], normalisers)
            entropy_bonus = agg_loss(entropy, response_mask[micro], algorithm.loss_agg_mode, **normalisers)
            (policy.loss - algorithm.entropy_coeff * entropy_bonus).backward()
            collected["actor/pg_loss"].append(policy.loss.item())
            collected["actor/entropy"].append(
                agg_loss(entropy.detach(), response_mask[micro], algorithm.loss_agg_mode).item())
            for name, value in policy.metrics.items():  # pg_clipfrac, ppo_kl, seq_clipfrac, seq_ratio_mean, ...
                collected[f"actor/{name}"].append(value)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), actor.grad_clip)
        if math.isfinite(grad_norm.item()):
            self.optimizer.step()
        else:  # verl skips the update on a non-finite grad norm
            events.message(f"step {self.step + 1}: grad norm {grad_norm.item()}, update skipped")
            self.optimizer.zero_grad(set_to_none=True)
        collected["actor/grad_norm"].append(grad_norm.item())
        if self.probe is not None:
            self.probe.after_update(rows)

    def policy_loss(self, log_probs: torch.Tensor, old_log_probs: torch.Tensor, advantages: torch.Tensor,
                    response_mask: torch.Tensor, normalisers: Normalisers) -> PolicyLossOutput:
        """The preset's policy loss from the registry (algo/losses.py): algorithm.loss_mode gspo -> gspo_loss
        (sequence ratio + clip, see the module doc), gspo_token -> gspo_token_loss, vanilla -> vanilla_loss."""
        algorithm = self.preset.algorithm
        return compute_policy_loss(
            algorithm.loss_mode, log_prob=log_probs, old_log_prob=old_log_probs, advantages=advantages,
            response_mask=response_mask, clip_ratio_low=algorithm.clip_ratio_low,
            clip_ratio_high=algorithm.clip_ratio_high, clip_ratio_c=algorithm.clip_ratio_c,
            loss_agg_mode=algorithm.loss_agg_mode, **normalisers)

    def batch_metrics(self, batch: RolloutBatch, scores: torch.Tensor, accs: torch.Tensor,
                      token_advantages: torch.Tensor, old_log_probs: torch.Tensor | None, timing: dict[str, float]
                      ) -> dict[str, float]:
        metrics = data_metrics(batch, scores, token_advantages, self.sampling.max_tokens)
        metrics["critic/acc/mean"] = accs.mean().item()
        if old_log_probs is not None and batch.log_probs is not None:
            metrics.update(rollout_probs_diff(batch.log_probs, old_log_probs, batch.response_mask))
        n_tokens = batch.attention_mask.sum().item()
        metrics.update(timing)
        metrics["perf/total_num_tokens"] = n_tokens
        metrics["perf/time_per_step"] = timing["timing_s/step"]
        metrics["perf/throughput"] = n_tokens / timing["timing_s/step"]
        metrics["perf/samples_per_s"] = len(batch) / timing["timing_s/step"]
        return metrics

    # ------------------------------------------------------------------ the loop
    def fit(self) -> dict:
        trainer = self.preset.trainer
        self.maybe_resume()
        start_step = self.step
        if self.step >= self.total_steps:
            events.message(f"run {self.run_dir.name} is already complete ({self.step}/{self.total_steps} steps): "
                           f"nothing to train; to extend it, rerun with --set trainer.total_training_steps=N "
                           f"(N > {self.step})")
            return {"run_dir": str(self.run_dir), "already_complete": True, "start_step": start_step,
                    "final_step": self.step}
        events.message(f"native engine on {self.device}: steps {self.step + 1}..{self.total_steps}, "
                       f"run {self.run_dir}")
        if self.step == 0 and trainer.val_before_train and self.val_rows:
            self.metrics.log(0, self.validate())
        started = time.perf_counter()
        last: dict[str, float] = {}
        last_val: dict[str, float] = {}
        while self.step < self.total_steps:
            metrics = self.train_step()
            self.step += 1
            metrics["training/global_step"] = self.step
            metrics["training/epoch"] = self.sampler.cursor.epoch
            if self.val_rows and schedule.fires(self.step, self.total_steps, trainer.test_freq):
                with torch.no_grad():
                    t0 = time.perf_counter()
                    last_val = self.validate()
                    metrics["timing_s/testing"] = time.perf_counter() - t0
                metrics.update(last_val)
            self.metrics.log(self.step, metrics)
            if schedule.fires(self.step, self.total_steps, trainer.save_freq):
                self.save()
            last = metrics
            self._progress(metrics, last_val)
        return {
            "run_dir": str(self.run_dir),
            "metrics": str(self.metrics.path),
            "checkpoints": str(self.run_dir / "checkpoints"),
            "start_step": start_step,
            "final_step": self.step,
            "train_wall_s": round(time.perf_counter() - started, 2),
            "final_score": last.get("critic/score/mean"),
            "final_acc": last.get("critic/acc/mean"),
            "val": last_val,
        }

    def _progress(self, metrics: dict[str, float], last_val: dict[str, float]) -> None:
        head = {"score": metrics["critic/score/mean"], "acc": metrics["critic/acc/mean"]}
        val_core = [v for k, v in last_val.items() if k.startswith("val-core/")]
        if val_core:
            head["val_acc"] = sum(val_core) / len(val_core)
        events.progress(self.step, self.total_steps, task="train", metrics=head)


def train(preset: Preset, run_dir: Path, trainer_class: type[NativeTrainer] = NativeTrainer) -> int:
    """Engine entry (see gspo_cli.engines): train one run to completion, emitting progress and a result.
    `trainer_class`: the job passes a fault-injecting subclass under GSPO_FAULT (faults.py)."""
    trainer = trainer_class(preset, run_dir)
    with trainer.metrics:  # its trackers flush their files at the end (TensorBoard events, W&B / SwanLab logs)
        summary = trainer.fit()
    events.result(summary)
    return 0

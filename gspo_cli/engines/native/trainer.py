"""The native GSPO training loop (one process, one device): the readable reference of the algorithm.

Per step: a batch of prompts -> `rollout.n` responses each (HF generate) -> scores from the reward registry by
data_source -> GRPO advantages -> old log-probs recomputed -> `ppo_epochs` x mini-batches of the preset's
policy loss (algo registry) -> AdamW with warmup and grad clipping. Validation every `test_freq` steps,
metrics in verl's names and file format, checkpoints every `save_freq` steps, automatic resume.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import torch

from gspo_cli.algo import agg_loss, broadcast_to_tokens, compute_policy_loss, grpo_outcome_advantages
from gspo_cli.engines.native import checkpoint
from gspo_cli.engines.native.data import Cursor, PromptSampler, load_rows
from gspo_cli.engines.native.rollout import Sampling, generate, response_log_probs
from gspo_cli.errors import ConfigError
from gspo_cli.jobs import events
from gspo_cli.layout import metrics_file, train_file, val_file
from gspo_cli.metrics.jsonl import MetricsWriter
from gspo_cli.models.device import resolve_device
from gspo_cli.models.loading import load_model, load_tokenizer, resolve_model_path


@contextmanager
def _timer(timing: dict, name: str):
    start = time.perf_counter()
    try:
        yield
    finally:
        timing[f"timing_s/{name}"] = timing.get(f"timing_s/{name}", 0.0) + time.perf_counter() - start


def _stats(prefix: str, values: torch.Tensor) -> dict[str, float]:
    v = values.detach().float().cpu()
    return {f"{prefix}/mean": v.mean().item(), f"{prefix}/max": v.max().item(), f"{prefix}/min": v.min().item()}


def data_metrics(batch, scores: torch.Tensor, token_adv: torch.Tensor, max_response_length: int) -> dict[str, float]:
    """verl's `compute_data_metrics` for this batch (same names, same definitions; checked against verl in tests).

    Advantages are summarised over valid response tokens (not per sequence), and a response counts as clipped
    when its length equals the response limit, EOS or not, as verl counts them.
    """
    resp_len = batch.response_mask.sum(-1).float()
    prompt_len = batch.attention_mask[:, :batch.prompt_len].sum(-1).float()
    out = {**_stats("critic/score", scores), **_stats("critic/rewards", scores)}  # no KL in reward: rewards == scores
    out.update(_stats("critic/advantages", torch.masked_select(token_adv, batch.response_mask.bool())))
    out.update(_stats("response_length", resp_len))
    out["response_length/clip_ratio"] = resp_len.eq(max_response_length).float().mean().item()
    out.update(_stats("prompt_length", prompt_len))
    return out


def score_responses(rows: list[dict], batch, overlong=None, max_len: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
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


def constant_with_warmup(optimizer, warmup: int):
    """verl's default LR schedule: linear warmup from 0 over `warmup` steps, then constant (stepped per step)."""
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, s / warmup) if warmup > 0 else 1.0)


class NativeTrainer:
    def __init__(self, preset, run_dir: Path):
        self.p = preset
        self.run_dir = Path(run_dir)
        t, a, r = preset.trainer, preset.actor, preset.rollout
        self.device = resolve_device(t.device if t.device != "auto" else preset.cluster.device)
        if self.device.type == "cpu" and t.cpu_threads:
            torch.set_num_threads(t.cpu_threads)
        self.seed = t.seed
        random.seed(self.seed)
        torch.manual_seed(self.seed)

        self.train_rows = load_rows(train_file(preset))
        self.val_rows = load_rows(val_file(preset)) if t.test_freq > 0 or t.val_before_train else []
        path = resolve_model_path(preset.model.path)
        self.tokenizer = load_tokenizer(path, preset.model.trust_remote_code)
        self.model = load_model(path, preset.model.dtype, self.device, preset.model.trust_remote_code)
        if preset.model.enable_gradient_checkpointing:
            self.model.gradient_checkpointing_enable()
        self.model.train()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
        self.scheduler = constant_with_warmup(self.optimizer, a.lr_warmup_steps)

        self.sampler = PromptSampler(len(self.train_rows), preset.data.train_batch_size, self.seed, preset.data.shuffle)
        self.total_steps = t.total_training_steps or t.total_epochs * self.sampler.steps_per_epoch
        self.sampling = Sampling(r.temperature, r.top_p, r.top_k, preset.data.max_response_length)
        v = r.val
        self.val_n = v.n  # validation responses per prompt; do_sample=false is greedy (temperature 0)
        self.val_sampling = Sampling(v.temperature if v.do_sample else 0.0, v.top_p, v.top_k,
                                     preset.data.max_response_length)
        self.metrics = MetricsWriter(metrics_file(self.run_dir))
        self.step = 0

    # ------------------------------------------------------------------ resume / save
    def maybe_resume(self) -> int | None:
        checkpoint.clean_partial(self.run_dir)
        mode = self.p.trainer.resume_mode
        latest = checkpoint.latest(self.run_dir)
        has_metrics = self.metrics.path.exists() and self.metrics.path.stat().st_size > 0
        if mode == "disable":
            # Training from scratch into a used folder would mix two runs' metrics, and retention would delete
            # the new checkpoints in favour of the old run's higher steps.
            if has_metrics or latest is not None:
                raise ConfigError(f"run {self.run_dir.name} already has metrics or checkpoints and resume_mode is "
                                  "disable", "pick another --run-name, or delete the run folder")
            return None
        if latest is None:
            if has_metrics:
                # Metrics of steps that never reached a checkpoint (and a step-0 validation): all redone.
                self.metrics.truncate_after(-1)
            return None
        state = checkpoint.load_state(latest)
        missing, unexpected = checkpoint.load_weights(self.model, latest, self.device)
        # Tied embeddings are saved once; anything else missing means a foreign or broken checkpoint.
        if unexpected or [k for k in missing if k != "lm_head.weight"]:
            raise ConfigError(f"checkpoint {latest} does not match the model (missing {missing[:3]}, "
                              f"unexpected {unexpected[:3]})", "resume_mode=disable or a new --run-name")
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        checkpoint.set_rng_state(state["rng"])
        self.sampler.cursor = Cursor(**state["cursor"])
        self.step = int(state["step"])
        dropped = self.metrics.truncate_after(self.step)
        events.message(f"resumed from {latest} (step {self.step}); dropped {dropped} metric line(s) after it")
        return self.step

    def save(self) -> Path:
        c = self.sampler.cursor
        return checkpoint.save(self.run_dir, self.step, self.model, self.tokenizer, self.optimizer, self.scheduler,
                               {"epoch": c.epoch, "position": c.position}, self.p.trainer.max_ckpt_to_keep)

    # ------------------------------------------------------------------ validation
    @torch.no_grad()
    def validate(self) -> dict[str, float]:
        n = self.val_n
        by_source: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        bs = max(1, 256 // n)
        for start in range(0, len(self.val_rows), bs):
            rows = self.val_rows[start:start + bs]
            batch = generate(self.model, self.tokenizer, rows, self.val_sampling, self.device, n=n)
            scores, accs = score_responses(rows, batch, self.p.algorithm.overlong_penalty,
                                           self.val_sampling.max_tokens)
            for j, i in enumerate(batch.row_index):
                src = rows[i]["data_source"]
                by_source[src]["acc"].append(accs[j].item())
                by_source[src]["reward"].append(scores[j].item())
        out = {}
        for src, vals in by_source.items():
            out[f"val-core/{src}/acc/mean@{n}"] = sum(vals["acc"]) / len(vals["acc"])
            out[f"val-aux/{src}/reward/mean@{n}"] = sum(vals["reward"]) / len(vals["reward"])
        return out

    # ------------------------------------------------------------------ one step
    def train_step(self) -> dict[str, float]:
        p, alg = self.p, self.p.algorithm
        timing: dict[str, float] = {}
        metrics: dict[str, float] = {}
        with _timer(timing, "step"):
            rows = [self.train_rows[i] for i in self.sampler.next_batch()]
            with _timer(timing, "gen"):
                batch = generate(self.model, self.tokenizer, rows, self.sampling, self.device,
                                 p.data.max_prompt_length, truncation=p.data.truncation, n=p.rollout.n)
            with _timer(timing, "reward"):
                scores, accs = score_responses(rows, batch, alg.overlong_penalty, self.sampling.max_tokens)
            mask = batch.response_mask
            old_logp = None
            if not self.single_pass(len(batch)):
                with _timer(timing, "old_log_prob"), torch.no_grad():
                    old_logp, _ = response_log_probs(self.model, batch, self.sampling.temperature)
            with _timer(timing, "adv"):
                adv = grpo_outcome_advantages(scores.to(self.device), batch.row_index,
                                              norm_by_std=alg.norm_adv_by_std_in_grpo)
                token_adv = broadcast_to_tokens(adv, mask)
            with _timer(timing, "update_actor"):
                metrics.update(self.update_policy(batch, old_logp, token_adv))
            self.scheduler.step()

        metrics.update(data_metrics(batch, scores, token_adv, self.sampling.max_tokens))
        metrics["critic/acc/mean"] = accs.mean().item()
        n_tokens = batch.attention_mask.sum().item()
        metrics.update(timing)
        metrics["perf/total_num_tokens"] = n_tokens
        metrics["perf/time_per_step"] = timing["timing_s/step"]
        metrics["perf/throughput"] = n_tokens / timing["timing_s/step"]
        metrics["perf/samples_per_s"] = len(batch) / timing["timing_s/step"]
        return metrics

    def single_pass(self, batch_size: int) -> bool:
        """One epoch of one mini-batch: the policy is updated once, after every log-prob of the step is taken."""
        a = self.p.actor
        return a.ppo_epochs == 1 and a.ppo_mini_batch_size * self.p.rollout.n >= batch_size

    def update_policy(self, batch, old_logp: torch.Tensor | None, token_adv: torch.Tensor) -> dict[str, float]:
        """ppo_epochs x mini-batches (x micro-batches for gradient accumulation) of the policy loss.

        `old_logp` None means a single pass: the old policy IS the current one when each micro-batch's forward
        runs (no update has happened yet in this step), so that forward's detached log-probs are the old
        log-probs, bit for bit what a separate no-grad pass would give, without the extra forward.
        """
        a, alg, r = self.p.actor, self.p.algorithm, self.p.rollout
        B = len(batch)
        mini = a.ppo_mini_batch_size * r.n  # verl: the mini-batch size counts prompts
        micro = a.ppo_micro_batch_size_per_device or mini
        mask = batch.response_mask
        collected: dict[str, list[float]] = defaultdict(list)
        for _ in range(a.ppo_epochs):
            for m0 in range(0, B, mini):
                mb = torch.arange(m0, min(m0 + mini, B), device=self.device)
                mb_mask = mask[mb]
                # Global normalisation so micro-batch losses add up to the mini-batch loss (verl).
                global_seqs = (mb_mask.sum(-1) > 0).sum().clamp(min=1).float()
                global_tokens = mb_mask.sum().clamp(min=1)
                self.optimizer.zero_grad(set_to_none=True)
                for u0 in range(0, len(mb), micro):
                    idx = mb[u0:u0 + micro]
                    logp, ent = response_log_probs(self.model, batch, self.sampling.temperature, idx,
                                                   with_entropy=True)
                    old = logp.detach() if old_logp is None else old_logp[idx]
                    agg = dict(batch_num_tokens=global_tokens, global_batch_size=global_seqs)
                    collected["actor/entropy"].append(agg_loss(ent.detach(), mask[idx], alg.loss_agg_mode).item())
                    out = compute_policy_loss(
                        alg.loss_mode, log_prob=logp, old_log_prob=old, advantages=token_adv[idx],
                        response_mask=mask[idx], clip_ratio_low=alg.clip_ratio_low,
                        clip_ratio_high=alg.clip_ratio_high, loss_agg_mode=alg.loss_agg_mode, **agg)
                    loss = out.loss
                    if alg.entropy_coeff > 0:
                        ent_loss = agg_loss(ent, mask[idx], alg.loss_agg_mode, **agg)
                        loss = loss - alg.entropy_coeff * ent_loss
                    loss.backward()
                    collected["actor/pg_loss"].append(out.loss.item())
                    for k in ("pg_clipfrac", "ppo_kl", "pg_clipfrac_lower", "seq_clipfrac"):
                        if k in out.metrics:
                            collected[f"actor/{k}"].append(out.metrics[k])
                grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), a.grad_clip)
                if math.isfinite(grad_norm.item()):
                    self.optimizer.step()
                else:  # verl skips the update on a non-finite grad norm
                    events.message(f"step {self.step + 1}: grad norm {grad_norm.item()}, update skipped")
                    self.optimizer.zero_grad(set_to_none=True)
                collected["actor/grad_norm"].append(grad_norm.item())
        out_metrics = {k: sum(v) / len(v) for k, v in collected.items()}
        out_metrics["actor/lr"] = self.optimizer.param_groups[0]["lr"]
        return out_metrics

    # ------------------------------------------------------------------ the loop
    def fit(self) -> dict:
        t = self.p.trainer
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
        if self.step == 0 and t.val_before_train and self.val_rows:
            val = self.validate()
            self.metrics.log(0, val)
        started = time.perf_counter()
        last: dict[str, float] = {}
        last_val: dict[str, float] = {}
        while self.step < self.total_steps:
            metrics = self.train_step()
            self.step += 1
            metrics["training/global_step"] = self.step
            metrics["training/epoch"] = self.sampler.cursor.epoch
            is_last = self.step == self.total_steps
            if self.val_rows and t.test_freq > 0 and (self.step % t.test_freq == 0 or is_last):
                with torch.no_grad():
                    t0 = time.perf_counter()
                    last_val = self.validate()
                    metrics["timing_s/testing"] = time.perf_counter() - t0
                metrics.update(last_val)
            self.metrics.log(self.step, metrics)
            if t.save_freq > 0 and (self.step % t.save_freq == 0 or is_last):
                t0 = time.perf_counter()
                self.save()
                events.message(f"checkpoint global_step_{self.step} saved ({time.perf_counter() - t0:.2f}s)")
            last = metrics
            head = {"score": metrics["critic/score/mean"], "acc": metrics["critic/acc/mean"]}
            val_core = [v for k, v in last_val.items() if k.startswith("val-core/")]
            if val_core:
                head["val_acc"] = sum(val_core) / len(val_core)
            events.progress(self.step, self.total_steps, task="train", metrics=head)
        wall = time.perf_counter() - started
        return {
            "run_dir": str(self.run_dir),
            "metrics": str(self.metrics.path),
            "checkpoints": str(self.run_dir / "checkpoints"),
            "start_step": start_step,
            "final_step": self.step,
            "train_wall_s": round(wall, 2),
            "final_score": last.get("critic/score/mean"),
            "final_acc": last.get("critic/acc/mean"),
            "val": last_val,
        }


def train(preset, run_dir: Path) -> int:
    """Engine entry (see gspo_cli.engines): train one run to completion, emitting progress and a result."""
    trainer = NativeTrainer(preset, run_dir)
    summary = trainer.fit()
    events.result(summary)
    return 0

"""Native GSPO engine vs TRL's GRPOTrainer (GSPO mode) on the tiny preset, in one process, same everything.

Same built-in tiny model and tokenizer (random init, same seed), same arith data, same seed, same batch shape
(32 prompts x 16 samples = 512 sequences per optimizer step, one step per generation), same GSPO settings
(sequence-level importance ratio, seq-mean-token-mean, clip 3e-4/4e-4, beta 0 / no KL, entropy bonus 0.03,
AdamW lr 1e-3, 5 warmup steps, grad clip 1.0, temperature 1.0, max 3 response tokens, the same reward: our
verifier plus DAPO's overlong penalty on the response length with EOS, as the tiny preset sets it). TRL runs with
importance_sampling_level="sequence", loss_type="grpo", beta=0, HF generate (no vLLM).

Prints one table: samples/s (sequences generated and trained on per second of training wall time) and the wall
time to reach reward 0.9 (first step at which the mean score over the last 10 steps is >= 0.9; scores are +-1,
so 0.9 means 95% correct). Wall time counts the training loop only, not model load or data preparation.

    .venv/bin/python benchmarks/native_vs_trl.py [--steps 600] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET = 0.9
WINDOW = 10


def first_reach(times: list[float], scores: list[float]) -> tuple[int | None, float | None]:
    for i in range(WINDOW - 1, len(scores)):
        if sum(scores[i - WINDOW + 1:i + 1]) / WINDOW >= TARGET:
            return i + 1, times[i]
    return None, None


def prepare(home: Path, steps: int):
    os.environ["GSPO_HOME"] = str(home)
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gspo_cli.config.presets import load_preset
    from gspo_cli.data.arith import make_arith_rows
    from gspo_cli.data.manifest import train_file

    preset = load_preset("tiny", [f"trainer.total_training_steps={steps}", "trainer.test_freq=-1",
                                  "trainer.save_freq=-1", "trainer.val_before_train=false"])
    spec = preset.data.arith
    rows = make_arith_rows("train", spec.train_size, spec.max_operand, spec.ops, spec.seed, preset.data.prompt_style)
    train_file(preset).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), train_file(preset))
    return preset, rows


def run_native(preset, home: Path) -> dict:
    from gspo_cli.engines.native.trainer import NativeTrainer
    from gspo_cli.jobs import events
    from gspo_cli.metrics.jsonl import read_metrics

    previous = events.set_sink(lambda e: None)
    try:
        trainer = NativeTrainer(preset, home / "runs" / "bench-native")
        start = time.perf_counter()
        times = []
        while trainer.step < trainer.total_steps:  # the trainer's own loop body, timed per step
            metrics = trainer.train_step()
            trainer.step += 1
            trainer.metrics.log(trainer.step, metrics)
            times.append(time.perf_counter() - start)
        wall = time.perf_counter() - start
    finally:
        events.set_sink(previous)
    scores = [r["data"]["critic/score/mean"] for r in read_metrics(trainer.metrics.path)]
    n = len(scores) * preset.data.train_batch_size * preset.rollout.n
    return {"engine": "native", "steps": len(scores), "wall_s": wall, "samples": n, "times": times, "scores": scores}


def run_trl(preset, rows: list[dict], home: Path) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from gspo_cli.models.loading import resolve_model_path
    from gspo_cli.rewards import compute_score

    path = resolve_model_path(preset.model.path)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    data = Dataset.from_list([{"prompt": r["prompt"], "ground_truth": r["reward_model"]["ground_truth"]}
                              for r in rows])

    from gspo_cli.rewards.shaping import overlong_penalty_for

    max_len, overlong = preset.data.max_response_length, preset.algorithm.overlong_penalty

    def arith_reward(prompts, completions, ground_truth, completion_ids, **kwargs):
        out = []
        for completion, gt, ids in zip(completions, ground_truth, completion_ids, strict=True):
            text = completion[-1]["content"] if isinstance(completion, list) else completion
            # completion_ids run up to and including EOS, the length the native engine penalises too
            out.append(float(compute_score("arith", text, gt)["score"]) + overlong_penalty_for(len(ids), max_len,
                                                                                            overlong))
        return out

    a, alg, r = preset.actor, preset.algorithm, preset.rollout
    seqs = preset.data.train_batch_size * r.n
    config = GRPOConfig(
        output_dir=str(home / "trl-out"), seed=preset.trainer.seed, max_steps=preset.trainer.total_training_steps,
        per_device_train_batch_size=seqs, gradient_accumulation_steps=1, generation_batch_size=seqs,
        num_generations=r.n, num_iterations=a.ppo_epochs, max_completion_length=preset.data.max_response_length,
        temperature=r.temperature, top_p=r.top_p, top_k=0 if r.top_k < 0 else r.top_k,
        importance_sampling_level="sequence", loss_type="grpo", beta=0.0,
        epsilon=alg.clip_ratio_low, epsilon_high=alg.clip_ratio_high, entropy_coef=alg.entropy_coeff,
        scale_rewards="group" if alg.norm_adv_by_std_in_grpo else "none",
        learning_rate=a.lr, lr_scheduler_type="constant_with_warmup", warmup_steps=a.lr_warmup_steps,
        weight_decay=a.weight_decay, max_grad_norm=a.grad_clip, optim="adamw_torch",
        logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, bf16=False, fp16=False,
        dataloader_num_workers=0, disable_tqdm=True,
    )
    scores, times = [], []

    class Clock(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            self.start = time.perf_counter()

        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "reward" in logs:
                scores.append(float(logs["reward"]))
                times.append(time.perf_counter() - self.start)

    clock = Clock()
    trainer = GRPOTrainer(model=model, reward_funcs=arith_reward, args=config, train_dataset=data,
                          processing_class=tok, callbacks=[clock])
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # one dict per step on stdout would bury the table
    trainer.train()
    wall = times[-1] if times else float("nan")
    return {"engine": "trl", "steps": len(scores), "wall_s": wall, "samples": len(scores) * seqs, "times": times,
            "scores": scores}


def summarize(res: dict) -> dict:
    step, t = first_reach(res["times"], res["scores"])
    return {
        "engine": res["engine"], "steps": res["steps"], "wall_s": round(res["wall_s"], 1),
        "samples_per_s": round(res["samples"] / res["wall_s"], 1),
        "first_score": round(res["scores"][0], 3) if res["scores"] else None,
        "final_score_avg10": round(sum(res["scores"][-WINDOW:]) / min(WINDOW, len(res["scores"])), 3)
        if res["scores"] else None,
        "step_to_0.9": step, "wall_s_to_0.9": round(t, 1) if t is not None else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--json", help="also write the raw curves and the summary here")
    ap.add_argument("--only", choices=["native", "trl"])
    args = ap.parse_args()
    import torch

    home = Path(tempfile.mkdtemp(prefix="gspo-bench-"))
    preset, rows = prepare(home, args.steps)
    results = []
    if args.only in (None, "native"):
        torch.manual_seed(preset.trainer.seed)
        results.append(run_native(preset, home))
        print(json.dumps(summarize(results[-1])), flush=True)
    if args.only in (None, "trl"):
        torch.manual_seed(preset.trainer.seed)
        results.append(run_trl(preset, rows, home))
        print(json.dumps(summarize(results[-1])), flush=True)
    rows_out = [summarize(r) for r in results]
    print(f"\ntorch threads: {torch.get_num_threads()}, cpus: {os.cpu_count()}, steps: {args.steps}, "
          f"batch: {preset.data.train_batch_size} prompts x {preset.rollout.n} samples")
    print("| engine | steps | wall s | samples/s | first score | final score (avg 10) | step to 0.9 | wall s to 0.9 |")
    print("|---|---|---|---|---|---|---|---|")
    for s in rows_out:
        print(f"| {s['engine']} | {s['steps']} | {s['wall_s']} | {s['samples_per_s']} | {s['first_score']} | "
              f"{s['final_score_avg10']} | {s['step_to_0.9'] or 'not reached'} | {s['wall_s_to_0.9'] or '-'} |")
    if len(rows_out) == 2:
        ratio = rows_out[0]["samples_per_s"] / rows_out[1]["samples_per_s"]
        print(f"\nnative / TRL samples/s: {ratio:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": rows_out, "raw": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

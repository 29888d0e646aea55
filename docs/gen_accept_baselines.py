"""Write the shipped acceptance baselines (gspo_cli/accept/baselines/*.json) from upstream's own files.

    PYTHONPATH=. .venv/bin/python docs/gen_accept_baselines.py

Reads the verbatim copies in tests/fixtures/upstream_baselines/ (verl-project/verl-ascend-recipe at RECIPE_COMMIT,
see its README) with the same parser `gspo accept --baseline FILE.txt` uses, and adds the provenance below: what
each number is, which job produced it, where the checker and the job script live. tests/accept/test_baselines.py
fails when the shipped files differ from this output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gspo_cli.accept import baselines, rules  # noqa: E402

RECIPE = "verl-project/verl-ascend-recipe"
RECIPE_COMMIT = "2a3edec04b4d4aaee83b61f050d507c431f63156"
FIXTURES = ROOT / "tests" / "fixtures" / "upstream_baselines"
WHAT = {
    rules.MEMORY: "actor peak device memory in GB (verl's actor/perf/max_memory_allocated_gb) at the log's last step",
    rules.THROUGHPUT: "tokens per second per device (verl's perf/throughput), mean of steps 5-14",
    rules.STEP_TIME: "seconds per training step (verl's timing_s/step), mean of steps 5-14",
    rules.REWARD: "mean sequence reward of the step's rollouts (verl's critic/rewards/mean), mean of steps 5-14",
    rules.PROBS_DIFF: "mean |p_train - p_rollout| of the sampled tokens (verl's training/rollout_probs_diff_mean, "
                      "logged with rollout.calculate_log_probs), mean of steps 5-14",
}
CHECKER = {"repo": RECIPE, "path": "baseline/check_npu.py", "commit": RECIPE_COMMIT,
           "url": f"https://github.com/{RECIPE}/blob/{RECIPE_COMMIT}/baseline/check_npu.py"}

JOBS = [
    {
        "id": "run_gspo_qwen3_8b_fsdp2_npu",
        "title": "GSPO Qwen3-8B, FSDP2 + vLLM-Ascend, GSM8K, 15 steps (verl NPU nightly)",
        "machine": "Atlas A2 (910B), 1 node x 8 NPUs",
        "preset": "nightly-gspo-qwen3-8b-a2",
        "route": "fsdp2",
        "file": "baseline/a2/nightly_log/run_gspo_qwen3_8b_fsdp2_npu/baseline_gspo_qwen3_8b_fsdp2_npu.txt",
        "job_script": {"repo": "verl-project/verl",
                       "path": "tests/special_npu/nightly_ci_ascend/run_gspo_qwen3_8b_fsdp2_npu.sh",
                       "commit": "1dda039b9c6311889a9c9a26040677e1254814f9",
                       "note": "TOTAL_TRAINING_STEPS=15, NGPUS_PER_NODE=8; the copy gspo's parity tests run is "
                               "tests/engines/verl/upstream/run_gspo_qwen3_8b_fsdp2_npu.sh"},
    },
    {
        "id": "run_gspo_qwen3_30b_megatron_npu",
        "title": "GSPO Qwen3-30B-A3B-Instruct-2507, Megatron + vLLM-Ascend, GSM8K (verl NPU nightly)",
        "machine": "Atlas A3, 1 node x 16 NPUs",
        "preset": "nightly-gspo-qwen3-30b-a3",
        "route": "megatron",
        "file": "baseline/a3/nightly_log/run_gspo_qwen3_30b_megatron_npu/baseline_gspo_qwen3_30b_megatron_npu.txt",
        "job_script": {"repo": "verl-project/verl",
                       "path": "tests/special_npu/nightly_ci_ascend/run_gspo_qwen3_30b_megatron_npu.sh",
                       "commit": "1dda039b9c6311889a9c9a26040677e1254814f9",
                       "note": "model_engine=megatron (TP 2, EP 8, ETP 1, offload), trainer.total_training_steps=15 "
                               "(last changed upstream in verl#7081); an older version (commit 2772765f) sets 3 steps, "
                               "which leaves check_npu.py's window 5-14 empty, so the baseline's run was a 15-step "
                               "version; the copy gspo's parity tests run is "
                               "tests/engines/verl/upstream/run_gspo_qwen3_30b_megatron_npu.sh"},
    },
]


def build(job: dict) -> dict:
    name = Path(job["file"]).name
    values = baselines.parse_upstream_text((FIXTURES / name).read_text(encoding="utf-8"))
    source = {"repo": RECIPE, "path": job["file"], "commit": RECIPE_COMMIT,
              "url": f"https://github.com/{RECIPE}/blob/{RECIPE_COMMIT}/{job['file']}",
              "checker": CHECKER, "job_script": job["job_script"], "what": WHAT,
              "note": "upstream stores only the reduced values (window means, last-step memory), not the per-step log"}
    b = baselines.Baseline(id=job["id"], title=job["title"], values={m: values[m] for m in rules.METRICS},
                           preset=job["preset"], route=job["route"], machine=job["machine"], source=source)
    return b.as_dict()


def render_all() -> dict[str, str]:
    return {f"{job['id']}.json": json.dumps(build(job), indent=2) + "\n" for job in JOBS}


if __name__ == "__main__":
    out = baselines.shipped_dir()
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render_all().items():
        (out / name).write_text(text, encoding="utf-8")
        print(out / name)

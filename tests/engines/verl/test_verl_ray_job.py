"""`gspo train` submits the compiled verl job to a real local Ray head (CPU only). The job's own log shows verl
parsed and accepted the configuration (main_ppo's validate_config, then TaskRunner, data, tokenizer) before it
stopped for lack of an accelerator; gspo reports that cleanly with the job id and the log tail. First, with the
wrapper's device-slot count on (the default), the job ends before verl starts, saying what the cluster lacks.

Kept cheap: gspo's built-in tiny random-init Qwen3 (no download), synthetic arith data, one transfer-queue
storage unit so verl's actors fit on the 2-CPU test head.
"""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.slow]

PRESET = """\
name: verl-cpu-probe
cluster: {{nnodes: 1, devices_per_node: 1, device: cuda}}
model: {{path: {model}, dtype: bfloat16}}
data:
  train: {{source: arith}}
  val: {{source: arith}}
  prompt_style: plain
  max_prompt_length: 64
  max_response_length: 32
  truncation: left
  train_batch_size: 4
  arith: {{train_size: 64, val_size: 8}}
actor: {{strategy: fsdp2, ppo_mini_batch_size: 2, use_dynamic_bsz: true, ppo_max_token_len_per_device: 256}}
rollout: {{name: vllm, n: 2, max_num_batched_tokens: 256, update_weights_bucket_megabytes: 16, enforce_eager: true}}
trainer: {{engine: verl, total_training_steps: 2, save_freq: 1, test_freq: 1, loggers: [console]}}
overrides:
  verl:
    - transfer_queue.backend.SimpleStorage.num_data_storage_units=1
    - actor_rollout_ref.rollout.agent.num_workers=1
    - data.dataloader_num_workers=0
"""


def test_verl_job_accepts_our_config_then_stops_for_lack_of_an_accelerator(ray_head, gspo, gspo_home, tmp_path):
    from gspo_cli.models.tiny import ensure_tiny_model

    model = ensure_tiny_model(tmp_path / "tiny-model")
    preset = tmp_path / "probe.yaml"
    preset.write_text(PRESET.format(model=model))

    prep = gspo("prepare-data", "--preset", str(preset), "--local")
    assert prep.returncode == 0, prep.stderr

    dry = gspo("train", "--preset", str(preset), "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "ready to launch" in dry.stdout

    # By default the job wrapper counts the cluster's device slots before starting verl: this head has none, so
    # the job ends at once with one line saying so and what to do (verl is never started).
    refused = gspo("train", "--preset", str(preset), "--address", ray_head.dashboard_url, timeout=300)
    assert refused.returncode == 75, refused.stderr[-3000:]
    assert ("verl cannot be placed on the cluster: 0 of 1 device slots (GPU) on 1 alive node(s); the job needs 1 "
            "(1 node(s) x 1) [run-cluster-short]: start every node with its devices") in refused.stderr
    assert "starting verl" in refused.stderr and "Traceback" not in refused.stderr

    # With the count left to verl, verl's own main_ppo runs our config until its resource check.
    proc = gspo("train", "--preset", str(preset), "--address", ray_head.dashboard_url,
                "--set", "trainer.restart.capacity_check=false", timeout=540)
    err = proc.stderr
    assert proc.returncode != 0
    job_id = re.search(r"Submitted verl job (\S+)", err).group(1)
    print(err[err.find(f"Job {job_id} failed") - 200:])
    assert job_id.startswith("verl-cpu-probe-") and "-train-" in job_id  # <run>-train-<time>, the run named by its preset
    # Clean failure: job id, status, log tail, how to read the full log; no gspo traceback.
    assert f"Job {job_id} failed" in err and f"gspo jobs logs {job_id}" in err
    assert "verl exited with code 1: ValueError: Total available GPUs 0 is less than total desired GPUs 1" in err
    # verl's own output stays in the job log (one line says where); gspo shows the lines that say why it failed,
    # and adds no traceback of its own (no gspo_cli frame anywhere).
    assert f"Job log (verl's and vLLM's own output; --verbose streams it here): gspo jobs logs {job_id} --raw" in err
    assert "[validate_config] All configuration checks passed" not in err and "torchtitan" not in err
    assert "Why, from the job log" in err
    assert 'gspo_cli/' not in "".join(line for line in err.splitlines() if line.strip().startswith("File "))
    assert err.rstrip().endswith(f"Full log: gspo jobs logs {job_id} --raw")

    log = gspo("jobs", "logs", job_id, "--raw", "--address", ray_head.dashboard_url).stdout
    accepted = log.find("[validate_config] All configuration checks passed successfully!")
    stopped = log.find("Total available GPUs 0 is less than total desired GPUs 1")
    assert 0 <= accepted < stopped, log[-4000:]
    # verl read our overrides: the resolved config it printed carries the GSPO loss and our reward function.
    assert "'loss_mode': 'gspo'" in log and "pkg://gspo_cli.rewards.verl_entry" in log  # the reward module resolves on every node
    # The run folder holds the resolved preset and the job spec; gspo wrote them before submitting.
    runs = list((gspo_home / "runs").iterdir())
    assert len(runs) == 2 and all((r / "config.yaml").is_file() and (r / "verl_job.json").is_file() for r in runs)

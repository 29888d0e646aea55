"""STAND-IN for `python -m verl.trainer.main_ppo` (this is NOT verl): tests of the job wrapper run it in verl's
place to see the wrapper's verl path (metrics from verl's file logger, verl checkpoints and resume overrides,
failures as verl prints them) without a cluster.

It honours the overrides the wrapper passes (trainer.total_training_steps, trainer.save_freq,
trainer.default_local_dir, trainer.resume_mode / resume_from_path), writes one verl-format line per step to
$VERL_FILE_LOGGER_PATH (opened "wb", as verl's FileLogger does), saves `global_step_N/` folders and verl's tracker
file, and misbehaves in its first attempt (GSPO_ATTEMPT=0; in every attempt with STANDIN_ALWAYS=1) as
STANDIN_FAULT says:
  hccl@S  print the error text a real HCCL all-reduce timeout printed (vllm-ascend issue #486) and exit 1
  hang@S  stop writing metrics and sleep, alive, as a rank stuck in a collective (its pid goes to
          $STANDIN_HANG_PIDFILE when set)
  log@S   print the file $STANDIN_LOG (a real excerpt, tests/fixtures/signatures/) and exit 1
  mismatch@S  from step S on, training/rollout_probs_diff_mean/_max grow (x2 per step), as before a collapse
  zero    print the start line and exit 0 without a step, as verl does when its dataloader yields nothing
Normal steps carry the train/rollout gap verl logs with calculate_log_probs (training/rollout_probs_diff_*) at a
steady bf16-noise level and timing_s/gen at 45% of the step.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

HCCL_ERROR = """[rank1]:   File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce
[rank1]:     work = group.allreduce([tensor], opts)
[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, error code is 6
[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.
[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck"""


def main(argv: list[str]) -> int:
    overrides = dict(item.lstrip("+").split("=", 1) for item in argv if "=" in item)
    total = int(overrides["trainer.total_training_steps"])
    save_freq = int(overrides.get("trainer.save_freq", "-1"))
    ckpt = Path(overrides["trainer.default_local_dir"])
    start = 0
    if overrides.get("trainer.resume_mode") == "resume_path":
        start = int(re.search(r"global_step_(\d+)", overrides["trainer.resume_from_path"]).group(1))
    first_attempt = os.environ.get("GSPO_ATTEMPT", "0") == "0"
    fault = os.environ.get("STANDIN_FAULT", "") if first_attempt or os.environ.get("STANDIN_ALWAYS") else ""
    kind, _, at = fault.partition("@")
    print(f"stand-in trainer (not verl): steps {start + 1}..{total}", flush=True)
    if kind == "zero":
        return 0
    with open(os.environ["VERL_FILE_LOGGER_PATH"], "wb", buffering=0) as log:
        for step in range(start + 1, total + 1):
            if kind in ("hccl", "hang", "log") and step == int(at):
                if kind == "hccl":
                    print(HCCL_ERROR, file=sys.stderr, flush=True)
                    return 1
                if kind == "log":
                    print(Path(os.environ["STANDIN_LOG"]).read_text(), file=sys.stderr, flush=True)
                    return 1
                if os.environ.get("STANDIN_HANG_PIDFILE"):  # tells the test's stall clock that a hang began
                    Path(os.environ["STANDIN_HANG_PIDFILE"]).write_text(str(os.getpid()))
                while True:
                    time.sleep(3600)
            time.sleep(0.2)
            grow = 2.0 ** (step - int(at) + 2) if kind == "mismatch" and step >= int(at) else 1.0
            data = {"critic/score/mean": 0.1 * step, "actor/pg_loss": 0.01, "actor/grad_norm": 0.3,
                    "actor/entropy": 0.5, "actor/pg_clipfrac": 0.1, "response_length/mean": 100.0,
                    "response_length/clip_ratio": 0.0, "perf/throughput": 1000.0, "timing_s/step": 0.2,
                    "timing_s/gen": 0.09, "training/rollout_probs_diff_valid": 1,
                    "training/rollout_probs_diff_mean": (0.004 + 0.0005 * (step * 7 % 3)) * grow,
                    "training/rollout_probs_diff_max": (0.2 + 0.01 * (step % 4)) * grow}
            log.write((f'{{"step": {step}, "data": ' + str(data).replace("'", '"') + "}\n").encode())
            if save_freq > 0 and step % save_freq == 0:
                (ckpt / f"global_step_{step}").mkdir(parents=True, exist_ok=True)
                (ckpt / "latest_checkpointed_iteration.txt").write_text(str(step))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

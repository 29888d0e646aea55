"""REPLAY of a recorded verl run (this is NOT verl): stands in for `python -m verl.trainer.main_ppo` so that the job
wrapper and the terminal view see what a real verl job gives them, without the engine venv.

It prints the recorded job log's own lines (Ray's, verl's and vLLM's output; gspo's `@@gspo` event lines and Ray's
job-manager INFO lines left out: the wrapper makes its own) and writes the recorded metrics.jsonl lines to
$VERL_FILE_LOGGER_PATH (opened "wb", as verl's FileLogger does), one per step, with the log lines of that step
before it; `global_step_N/` folders at trainer.save_freq as verl saves them. The recordings are
tests/fixtures/verl_runs/ (REPLAY_LOG, REPLAY_METRICS: gzip files)."""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
import time
from pathlib import Path

STEP = re.compile(r'^@@gspo \{"kind": "progress", "step": (\d+)')


def main(argv: list[str]) -> int:
    overrides = dict(item.lstrip("+").split("=", 1) for item in argv if "=" in item)
    save_freq = int(overrides.get("trainer.save_freq", "-1"))
    ckpt = Path(overrides["trainer.default_local_dir"])
    log = gzip.open(os.environ["REPLAY_LOG"], "rt", encoding="utf-8").read().splitlines()
    metrics = gzip.open(os.environ["REPLAY_METRICS"], "rb").read().splitlines(keepends=True)
    # the recorded log's lines before each step's progress event belong to that step
    chunks: list[list[str]] = [[]]
    for line in log:
        if STEP.match(line):
            chunks.append([])
        elif not line.startswith("@@gspo ") and " INFO job_manager.py:" not in line:
            chunks[-1].append(line)
    with open(os.environ["VERL_FILE_LOGGER_PATH"], "wb", buffering=0) as out:
        for i, record in enumerate(metrics):
            print("\n".join(chunks[i] if i < len(chunks) else []), flush=True)
            out.write(record)
            step = json.loads(record)["step"]
            if save_freq > 0 and step and step % save_freq == 0:
                (ckpt / f"global_step_{step}").mkdir(parents=True, exist_ok=True)
                (ckpt / "latest_checkpointed_iteration.txt").write_text(str(step))
            time.sleep(0.05)
        print("\n".join(line for chunk in chunks[len(metrics):] for line in chunk), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The verl-train job file `gspo train` writes (engines/verl/launch), with the recorded 16-step tiny-moe-verl run
replayed in verl's place (tests/jobs/replay_verl.py): for the tests that put a real verl log through the real job
wrapper."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from gspo_cli.config.presets import load_preset
from gspo_cli.config.schema import to_jsonable

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "verl_runs"
REPLAY = Path(__file__).resolve().parent / "replay_verl.py"
RECORDED = RUNS / "tiny-moe-verl-cold.job.log.gz"


def write_job(run: Path, save_freq: int) -> Path:
    """Run folder `run` with its config.yaml and verl_job.json (16 steps); the job file's path."""
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump(to_jsonable(load_preset("tiny-moe-verl"))))
    metrics = run / "metrics.jsonl"
    spec = run / "verl_job.json"
    spec.write_text(json.dumps({
        "trainer_command": [sys.executable, "-u", str(REPLAY)],
        "overrides": ["trainer.total_training_steps=16", f"trainer.save_freq={save_freq}",
                      f"trainer.default_local_dir={run / 'checkpoints'}"],
        "env_vars": {"VERL_FILE_LOGGER_PATH": str(metrics), "REPLAY_LOG": str(RECORDED),
                     "REPLAY_METRICS": str(RUNS / "tiny-moe-verl-cold.metrics.jsonl.gz")},
        "metrics_file": str(metrics), "total_steps": 16, "resume_from": None,
    }))
    return spec

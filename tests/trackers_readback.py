"""Read a run's tracker files back with each package's own reader (shared by the native tests and the engine tier):

- TensorBoard: tensorboard's EventAccumulator over runs/<run>/tensorboard;
- W&B offline: `wandb leet inspect --json` (wandb 0.31's reader of a `.wandb` transaction log, through wandb-core)
  over runs/<run>/wandb/offline-run-*/run-*.wandb, its `history` records;
- SwanLab offline: swanlab's DataStoreReader (what `swanlab sync` reads) over runs/<run>/swanlog/run-*/run-*.swanlab,
  its `scalar` records parsed with swanlab's Record proto.

Each returns {metric: {step: value}}; `expected` gives the same from metrics.jsonl, the engines' file logger.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from gspo_cli.metrics.jsonl import last_per_step

Series = dict[str, dict[int, float]]


def expected(run_dir: Path) -> Series:
    """metric -> step -> value of metrics.jsonl's numbers (what every tracker gets)."""
    out: Series = {}
    for step, data in last_per_step(run_dir / "metrics.jsonl").items():
        for key, value in data.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                out.setdefault(key, {})[step] = float(value)
    return out


def tensorboard(run_dir: Path) -> Series:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    folder = run_dir / "tensorboard"
    assert list(folder.glob("events.out.tfevents.*")), f"no event file in {folder}"
    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}


def wandb_file(run_dir: Path) -> Path:
    files = sorted((run_dir / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(files) == 1, f"expected one offline run under {run_dir / 'wandb'}, found {files}"
    return files[0]


def wandb(run_dir: Path) -> Series:
    proc = subprocess.run([sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(wandb_file(run_dir))],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out: Series = {}
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if record.get("type") != "history":
            continue
        item = record["history"]["item"]
        for key, value in item.items():
            if not key.startswith("_"):  # wandb's own _step, _runtime, _timestamp
                out.setdefault(key, {})[int(item["_step"])] = float(value)
    return out


def swanlab_file(run_dir: Path) -> Path:
    files = sorted((run_dir / "swanlog").glob("run-*/run-*.swanlab"))
    assert len(files) == 1, f"expected one offline run under {run_dir / 'swanlog'}, found {files}"
    return files[0]


def swanlab(run_dir: Path) -> Series:
    from swanlab.proto.swanlab.record.v1.record_pb2 import Record
    from swanlab.sdk.internal.core_python.store import DataStoreReader

    reader = DataStoreReader()
    reader.open(swanlab_file(run_dir))
    out: Series = {}
    try:
        for raw in reader:
            record = Record()
            record.ParseFromString(raw)
            # swanlab's own system samples (__swanlab__.cpu.pct, ...) are not the run's metrics
            if record.WhichOneof("record_type") == "scalar" and not record.scalar.key.startswith("__swanlab__."):
                out.setdefault(record.scalar.key, {})[int(record.scalar.step)] = record.scalar.value.number
    finally:
        reader.close()
    return out


READERS = {"tensorboard": tensorboard, "wandb": wandb, "swanlab": swanlab}


def mismatches(got: Series, want: Series, rel: float = 1e-6) -> list[str]:
    """What differs between a tracker's series and metrics.jsonl's (names, steps, values; TensorBoard keeps float32)."""
    problems = [f"missing {k}" for k in sorted(set(want) - set(got))]
    problems += [f"extra {k}" for k in sorted(set(got) - set(want))]
    for key in sorted(set(want) & set(got)):
        if set(got[key]) != set(want[key]):
            problems.append(f"{key}: steps {sorted(got[key])} != {sorted(want[key])}")
            continue
        for step, value in want[key].items():
            if not math.isclose(got[key][step], value, rel_tol=rel, abs_tol=1e-6):
                problems.append(f"{key}@{step}: {got[key][step]} != {value}")
    return problems


def summary(run_dir: Path) -> dict[str, str]:
    """tracker -> 'N metrics x steps [...]' of what its reader found (for a test's printed figures)."""
    out = {}
    for name, read in READERS.items():
        series = read(run_dir)
        steps = sorted({s for v in series.values() for s in v})
        out[name] = f"{len(series)} metrics x steps {steps}"
    return out

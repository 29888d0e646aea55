"""The checks a simulated cluster (real Ray nodes on this machine, registered as nodes of one device kind) puts a
shipped preset through, and the verdict table they print. Used by test_simulated_npu_cluster.py and
test_simulated_gpu_cluster.py.

Per preset (and per too-big variant, which must be refused):
- dry-run: `gspo train --preset P --dry-run --json` on the head node (its environment: npu-smi, torch_npu, ...),
  with the data prepared: launchable, the device resolved as on that node, what the job asks of the cluster;
- capacity: what `gspo train` writes (run folder, job file with the device and the need), then the job's
  entrypoint, the job wrapper, run as the Ray job runs it (RAY_ADDRESS and the token of the cluster): its
  device-slot check against the live cluster either lets the trainer start (a labelled stand-in for verl's
  main_ppo) or ends the job with exit 75 and the advice;
- placement: verl's own ResourcePoolManager and placement groups for the job's resource pools, as a Ray driver on
  the cluster (verl_placement.py).
The dry-run and the placement driver are each their own process per row, as before, but forked from one Python per
cluster that imported verl once (forking_runner.py, `Runners`): a fresh import per row and stage cost ~6 s of CPU.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import multinode
from forking_runner import Runner

HERE = Path(__file__).resolve().parent
PLACEMENT_TIMEOUT_S = 30.0


@dataclass
class Row:
    preset: str
    sets: list[str] = field(default_factory=list)
    expect_fit: bool = True
    device: str = ""
    asks: str = ""
    dry_run: str = ""
    capacity: str = ""
    placement: str = ""
    ok: bool = False  # every verdict as expected

    @property
    def label(self) -> str:
        return self.preset + (f" --set {' '.join(self.sets)}" if self.sets else "")


# What each forked process imports first (so its parent imports it once): the dry-run's verl schema check
# (engines/verl/schema_check.py: verl.trainer.ppo.utils, verl.utils.config, Hydra) under gspo's CLI; the placement
# driver's first import (verl_placement.py), which brings verl, torch and Ray.
DRY_RUN_IMPORTS = ("gspo_cli.cli", "hydra", "verl.trainer.ppo.utils", "verl.utils.config")
PLACEMENT_IMPORTS = ("verl.plugin.platform.platform_manager",)


@dataclass
class Runners:
    """Where a cluster's rows run their dry-run (`gspo` on node-a, node-a's environment, as `cluster.gspo`) and
    their placement driver (a Ray job's environment on node-a, `job_env`)."""
    gspo: Runner
    placement: Runner


@contextlib.contextmanager
def runners(cluster) -> Iterator[Runners]:
    with Runner(cluster.envs["node-a"], multinode.REPO, DRY_RUN_IMPORTS) as gspo, \
            Runner(job_env(cluster), multinode.REPO, PLACEMENT_IMPORTS) as place:
        yield Runners(gspo, place)


def job_env(cluster, node: str = "node-a") -> dict[str, str]:
    """The environment a Ray job's driver gets on `node`: the node's own, the cluster's GCS address and token."""
    return {**cluster.envs[node], "RAY_ADDRESS": cluster.gcs, "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(cluster.home / "ray" / "auth_token")}


def write_job(preset: str, sets: list[str] | None = None):
    """What `gspo train --preset PRESET` writes before it submits (run folder, config.yaml, the job file),
    compiled in this process; the job's trainer is a labelled stand-in for verl's main_ppo (the job file's
    `trainer_command`, the wrapper's test hook) that says it started and writes one verl file-logger line per
    step the job expects."""
    from gspo_cli.engines.verl import launch

    plan = launch.make_plan(preset, sets or [], schema=False)
    spec = launch.write_run(plan)
    job = json.loads(spec.read_text())
    standin = (f"import json; print('stand-in for verl main_ppo: started', flush=True)\n"
               f"with open({job['metrics_file']!r}, 'a') as f:\n"
               f"    for s in range(1, {int(job.get('total_steps') or 1)} + 1):\n"
               "        f.write(json.dumps({'step': s, 'data': {'timing_s/step': 0.01}}) + '\\n')")
    job["trainer_command"] = [sys.executable, "-c", standin]
    spec.write_text(json.dumps(job))
    return plan, spec


def run_wrapper(cluster, spec: Path) -> subprocess.CompletedProcess:
    """The verl job's entrypoint as the Ray job runs it on node-a: the job wrapper, its device-slot check first."""
    return subprocess.run([sys.executable, "-m", "gspo_cli.job_kinds", "verl-train", str(spec)], capture_output=True,
                          text=True, env=job_env(cluster), timeout=300, cwd=multinode.REPO)


def prepare_data(cluster, preset: str) -> None:
    """DAPO-shaped and AIME-shaped raw files (600 distinct training problems: a batch of 256 fits) prepared into
    the cluster's shared home, as `gspo prepare-data --input` does with downloaded files."""
    sys.path.insert(0, str(HERE.parent / "data"))
    from raw_factories import dapo_row, write_aime_verl, write_dapo

    raw = cluster.base / "raw"
    raw.mkdir(exist_ok=True)
    write_dapo(raw / "dapo.parquet", [dapo_row(f"Problem {i}: what is {i} times {i + 3}?", str(i * (i + 3)), f"p{i}")
                                      for i in range(600)])
    write_aime_verl(raw / "aime.parquet")
    res = cluster.gspo("node-a", "prepare-data", "--preset", preset, "--local", "--input",
                       f"dapo-math-17k={raw / 'dapo.parquet'}", "--input", f"aime-2024={raw / 'aime.parquet'}")
    assert res.returncode == 0, res.stderr[-3000:]


def trains_on(preset: str, source: str) -> bool:
    from gspo_cli.config.presets import load_preset

    return load_preset(preset).data.train.source == source


def prepare_gsm8k(cluster, preset: str) -> None:
    """GSM8K-shaped raw files (openai/gsm8k's schema: question, answer ending in `#### N`; 300 train, 50 test rows)
    and the AIME file prepared for a preset that trains on GSM8K (verl's nightly job, `gspo accept`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    raw = cluster.base / "raw"
    raw.mkdir(exist_ok=True)
    for name, count in (("gsm8k-train", 300), ("gsm8k-test", 50)):
        rows = [{"question": f"A shop sells {i} pens and then {i + 2} more. How many pens?",
                 "answer": f"{i} + {i + 2} = {2 * i + 2}\n#### {2 * i + 2}"} for i in range(count)]
        pq.write_table(pa.Table.from_pylist(rows), raw / f"{name}.parquet")
    if not (raw / "aime.parquet").exists():
        sys.path.insert(0, str(HERE.parent / "data"))
        from raw_factories import write_aime_verl

        write_aime_verl(raw / "aime.parquet")
    from gspo_cli.config.presets import load_preset

    # the AIME file only for a preset whose eval prepares it (prepare-data refuses an --input it does not prepare)
    aime = ["--input", f"aime-2024={raw / 'aime.parquet'}"] if "aime2024" in load_preset(preset).eval.prepare else []
    res = cluster.gspo("node-a", "prepare-data", "--preset", preset, "--local",
                       "--input", f"gsm8k={raw / 'gsm8k-train.parquet'}", "--input",
                       f"gsm8k-test={raw / 'gsm8k-test.parquet'}", *aime)
    assert res.returncode == 0, res.stderr[-3000:]


def placement(run: Runners, device: str, pools: dict[str, list[int]]) -> dict:
    res = run.placement.run([device, json.dumps(pools), str(PLACEMENT_TIMEOUT_S)],
                            script=str(HERE / "verl_placement.py"), timeout=PLACEMENT_TIMEOUT_S + 240)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("@@placement ")), None)
    assert line is not None, (res.stdout + res.stderr)[-3000:]
    return json.loads(line[len("@@placement "):])


def judge(cluster, run: Runners, row: Row, device: str) -> Row:
    """Every check of one row; `row.ok` when each verdict is what the row expects."""
    from gspo_cli.engines.verl.cluster import resource_pools

    sets = [a for s in row.sets for a in ("--set", s)]
    dry = run.gspo.run(["train", "--preset", row.preset, *sets, "--dry-run", "--json"], module="gspo_cli",
                       timeout=600)
    plan = json.loads(dry.stdout) if dry.stdout.strip().startswith("{") else {}
    errors = [c["message"] for c in plan.get("preflight", {}).get("checks", []) if c["status"] == "error"]
    row.dry_run = "launchable" if plan.get("ok") else f"NOT LAUNCHABLE: {(errors or [dry.stderr[-200:]])[0]}"
    resolved = plan.get("device") or {}
    row.device = f"{resolved.get('device')} ({resolved.get('asked')})" if resolved else "?"
    need = plan.get("cluster_need") or {}
    row.asks = f"{need.get('nnodes')} x {need.get('per_node')} {need.get('resource')}" if need else "?"

    compiled, spec = write_job(row.preset, row.sets)
    wrapped = run_wrapper(cluster, spec)
    said = wrapped.stdout + wrapped.stderr
    if wrapped.returncode == 0 and "stand-in for verl main_ppo: started" in said:
        row.capacity = "fits: the wrapper started the trainer (job exit 0)"
    else:
        reason = next((ln for ln in said.splitlines() if "cannot be placed on the cluster" in ln), said[-300:])
        row.capacity = f"exit {wrapped.returncode}: {reason.split('cannot be placed on the cluster: ', 1)[-1]}"

    placed = placement(run, device, resource_pools(compiled.preset))
    row.placement = (f"placed: {placed['groups']} group(s) on {placed['nodes']} node(s), bundle {placed['bundle']}"
                     if placed["placed"] else f"not placed: {placed['why']}")

    fits = wrapped.returncode == 0 and placed["placed"]
    refused = (wrapped.returncode == 75 and "[run-cluster-short]" in said and "start every node with its devices"
               in said and "lower cluster.nnodes / cluster.devices_per_node" in said and not placed["placed"])
    row.ok = bool(plan.get("ok")) and resolved.get("device") == device and (fits if row.expect_fit else refused)
    return row


def table(rows: list[Row], kind: str) -> str:
    head = (f"| {kind} preset | device (cluster.device) | asks the cluster | dry-run | capacity (job wrapper) | "
            "placement (verl's own) | as expected |")
    lines = [head, "|" + "---|" * 7]
    for r in rows:
        lines.append(f"| {r.label} | {r.device} | {r.asks} | {r.dry_run} | {r.capacity} | {r.placement} | "
                     f"{'yes' if r.ok else 'NO'} ({'passes' if r.expect_fit else 'refused'}) |")
    return "\n".join(lines)


def shipped_presets_on(kind: str) -> list[str]:
    """Every shipped preset whose verl device resolves to `kind` (npu, cuda) on this host: the preset's own device,
    and `auto` by verl's rule here."""
    from gspo_cli.config import devices
    from gspo_cli.config.presets import builtin_sources, load_preset
    from gspo_cli.engines import spec_for

    names = []
    for source in builtin_sources():
        preset = load_preset(source.name)
        resolved = spec_for(preset).device(preset)
        if resolved is not None and resolved.device is devices.get(kind):
            names.append(source.name)
    return names

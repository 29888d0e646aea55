"""A simulated Ascend cluster: real Ray nodes on this machine that register their NPUs the way a real Ascend node
does, and the NPU presets' jobs on it.

Four nodes (the most a shipped NPU preset asks for: qwen3-32b-4x16), started as users start them: `gspo cluster up`
on node-a and `gspo cluster join` on node-b..d (tests/env/multinode.py). Each is a fake Ascend host: `npu-smi`
showing 16 NPUs (a real A3 capture, tests/env/fixtures), a CANN tree, and a Python that finds `torch_npu` and
CANN's `acl` module (env_hosts' fake site-packages), so that
- gspo registers the node's NPUs as a real Ascend node gets them: `ray start --resources={"NPU": 16}` from the
  npu-smi count, with RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES (env/raystart.py); Ray's own NPU
  accelerator manager (ray/_private/accelerators/npu.py: resource "NPU", ASCEND_RT_VISIBLE_DEVICES, `import acl`
  for the count and SoC name) sees the same node;
- verl's device detection (verl/plugin/platform/platform_npu.py: torch_npu importable -> npu) would pick npu.

One cluster serves the whole module (each `ray start` costs ~8 s and ~600 MB here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import multinode
import pytest

pytestmark = [pytest.mark.multinode, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(1200)]

NAMES = ("node-a", "node-b", "node-c", "node-d")
SHAPE = ["--preset", "qwen3-32b-4x16", "--stack", "vllm-ascend==0.23.0"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    t0 = time.monotonic()
    c = multinode.start(tmp_path_factory.mktemp("npu-cluster"), shape=SHAPE, names=NAMES, torch_npu=True)
    try:
        assert c.record("node-a") is not None, c.outputs.get("up", "")[-3000:]
        for name in NAMES[1:]:
            assert c.record(name) is not None, c.outputs.get(f"join {name}", "")[-3000:]
        c.timings["ready_s"] = time.monotonic() - t0
        yield c
    finally:
        left = multinode.stop(c)
        c.timings["total_s"] = time.monotonic() - t0
        print(f"\nsimulated NPU cluster timings: {json.dumps({k: round(v, 1) for k, v in c.timings.items()})}")
        assert not left, f"gspo cluster down left these nodes running: {left}"


@pytest.fixture
def on_node_a(cluster, monkeypatch):
    """This test process as a gspo command on node-a: its home, and its Python finds node-a's torch_npu."""
    monkeypatch.setenv("GSPO_HOME", str(cluster.home))
    monkeypatch.syspath_prepend(str(cluster.sites["node-a"]))
    return cluster


def _job_env(cluster, node: str = "node-a") -> dict[str, str]:
    """The environment a Ray job's driver gets on `node`: the node's own, the cluster's GCS address and token."""
    return {**cluster.envs[node], "RAY_ADDRESS": cluster.gcs, "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(cluster.home / "ray" / "auth_token")}


def _write_job(preset: str, sets: list[str] | None = None):
    """What `gspo train --preset PRESET` writes before it submits: the run folder with config.yaml and the job
    file (verl_job.json), compiled in this process (node-a); the job's trainer is a labelled stand-in for verl's
    main_ppo that prints one line (the job file's `trainer_command`, the wrapper's test hook)."""
    from gspo_cli.engines.verl import launch

    plan = launch.make_plan(preset, sets or [], schema=False)
    spec = launch.write_run(plan)
    job = json.loads(spec.read_text())
    job["trainer_command"] = [sys.executable, "-c", "print('stand-in for verl main_ppo: started')"]
    spec.write_text(json.dumps(job))
    return plan, spec


def _run_wrapper(cluster, spec) -> subprocess.CompletedProcess:
    """The verl job's entrypoint, as the Ray job runs it on node-a: the job wrapper, its device-slot check first."""
    return subprocess.run([sys.executable, "-m", "gspo_cli.job_kinds", "verl-train", str(spec)], capture_output=True,
                          text=True, env=_job_env(cluster), timeout=300, cwd=multinode.REPO)


def test_the_nodes_register_their_npus_as_an_ascend_node_does(cluster):
    res = cluster.gspo("node-a", "cluster", "status", "--json")
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert sorted(n["name"] for n in info["nodes"]) == list(NAMES)
    assert all(n["resources"].get("NPU") == 16 and "GPU" not in n["resources"] for n in info["nodes"]), info["nodes"]
    assert info["resources"]["NPU"] == 64


def test_auto_device_preset_on_an_ascend_node_is_placed_on_npu(on_node_a):
    """qwen3-0.6b-1x1 says `cluster.device: auto` (verl picks npu where torch_npu is installed). On an Ascend
    node its job must count NPU slots: the job wrapper starts the trainer instead of ending the job with
    "0 of 1 device slots (GPU)" (exit 75) before verl starts."""
    _, spec = _write_job("qwen3-0.6b-1x1")
    res = _run_wrapper(on_node_a, spec)
    print(res.stderr[-3000:])
    assert "device slots" not in res.stderr
    assert res.returncode == 0 and "stand-in for verl main_ppo: started" in res.stdout + res.stderr
    assert os.environ["GSPO_HOME"] == str(on_node_a.home)

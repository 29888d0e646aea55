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
import time

import multinode
import pytest
import simulated_cluster as sim

pytestmark = [pytest.mark.multinode, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(2400)]

NAMES = ("node-a", "node-b", "node-c", "node-d")
SHAPE = ["--preset", "qwen3-32b-4x16", "--stack", "vllm-ascend==0.23.0"]
# Variants that need more than the cluster has: refused by the wrapper's count with the advice, and by verl's own
# placement (too many devices in total; too many on one node); verl's Megatron route (the nightly MoE job) too.
MEGATRON = "nightly-gspo-qwen3-30b-a3"
TOO_BIG = [("qwen3-32b-4x16", ["cluster.nnodes=8"]), ("qwen3-8b-1x16", ["cluster.devices_per_node=32"]),
           (MEGATRON, ["cluster.nnodes=8"])]


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
    _, spec = sim.write_job("qwen3-0.6b-1x1")
    res = sim.run_wrapper(on_node_a, spec)
    print(res.stderr[-3000:])
    assert "device slots" not in res.stderr
    assert res.returncode == 0 and "stand-in for verl main_ppo: started" in res.stdout + res.stderr
    assert os.environ["GSPO_HOME"] == str(on_node_a.home)


def test_every_npu_preset_passes_and_too_big_ones_are_refused(on_node_a):
    """Every shipped NPU preset: dry-run launchable on node-a, the wrapper's count lets its trainer start, verl's
    own placement groups form; the too-big variants are refused with the advice and do not place. Among them verl's
    Megatron route (MEGATRON: actor TP 2 / EP 8, verl's schema check of the Megatron trainer config and the
    Megatron preflight in its dry-run): placed on one node's 16 NPUs, refused on 8 nodes."""
    presets = sim.shipped_presets_on("npu")
    assert {"qwen3-0.6b-1x1", "qwen3-8b-1x16", "qwen3-8b-2x8", "qwen3-32b-4x16",
            "nightly-gspo-qwen3-30b-a3"} <= set(presets), presets
    sim.prepare_data(on_node_a, "qwen3-32b-4x16")
    for name in presets:  # a preset on GSM8K (verl's nightly job for `gspo accept`) gets its own data
        if sim.trains_on(name, "gsm8k"):
            sim.prepare_gsm8k(on_node_a, name)
    rows = [sim.Row(name) for name in presets] + [sim.Row(name, sets, expect_fit=False) for name, sets in TOO_BIG]
    t0 = time.monotonic()
    with sim.runners(on_node_a) as run:
        for row in rows:
            sim.judge(on_node_a, run, row, "npu")
    on_node_a.timings["presets_s"] = time.monotonic() - t0
    print("\nSimulated Ascend cluster: 4 nodes x 16 NPU (gspo cluster up/join, npu-smi, torch_npu, acl)\n"
          + sim.table(rows, "NPU"))
    assert all(r.ok for r in rows), [r for r in rows if not r.ok]
    megatron = next(r for r in rows if r.preset == MEGATRON and not r.sets)
    assert megatron.asks == "1 x 16 NPU" and megatron.placement.startswith("placed: ")


def test_the_megatron_nightly_job_file_carries_the_megatron_route(on_node_a):
    """The job file the Megatron preset's `gspo train` writes (placed above) carries verl's Megatron route: the
    wrapper hands verl these overrides."""
    plan, _ = sim.write_job(MEGATRON)
    overrides = plan.compiled.overrides
    assert "model_engine=megatron" in overrides
    assert "actor_rollout_ref.actor.megatron.expert_model_parallel_size=8" in overrides

"""A simulated GPU cluster: real Ray nodes on this machine that register GPUs, and the GPU presets' jobs on it.

Four nodes (the most a shipped GPU preset asks for: qwen3-32b-4x8-h100), started as users start them: `gspo
cluster up` on node-a and `gspo cluster join` on node-b..d (tests/env/multinode.py), each with
`--ray-arg=--num-gpus=8`: what Ray's own GPU detection registers on an 8-GPU host (ray/_private/accelerators/
nvidia_gpu.py: resource "GPU", CUDA_VISIBLE_DEVICES). No torch_npu here, so a `cluster.device: auto` preset
resolves to cuda, as verl resolves it on a GPU host. The same checks as the Ascend cluster
(tests/env/simulated_cluster.py); an NPU preset on this cluster is refused too (it asks for NPU, which no node
has). One cluster for the module; the NPU one (test_simulated_npu_cluster.py) is gone by the time this starts.
"""

from __future__ import annotations

import json
import time

import multinode
import pytest
import simulated_cluster as sim

pytestmark = [pytest.mark.multinode, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(2400)]

NAMES = ("node-a", "node-b", "node-c", "node-d")
SHAPE = ["--preset", "qwen3-32b-4x8-h100"]
TOO_BIG = [("qwen3-32b-4x8-h100", ["cluster.nnodes=8"]), ("qwen3-32b-4x8-h100", ["cluster.devices_per_node=16"])]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    t0 = time.monotonic()
    c = multinode.start(tmp_path_factory.mktemp("gpu-cluster"), shape=SHAPE, names=NAMES, ascend=False,
                        ray_args=("--num-gpus=8",))
    try:
        assert c.record("node-a") is not None, c.outputs.get("up", "")[-3000:]
        for name in NAMES[1:]:
            assert c.record(name) is not None, c.outputs.get(f"join {name}", "")[-3000:]
        c.timings["ready_s"] = time.monotonic() - t0
        yield c
    finally:
        left = multinode.stop(c)
        c.timings["total_s"] = time.monotonic() - t0
        print(f"\nsimulated GPU cluster timings: {json.dumps({k: round(v, 1) for k, v in c.timings.items()})}")
        assert not left, f"gspo cluster down left these nodes running: {left}"


@pytest.fixture
def on_node_a(cluster, monkeypatch):
    monkeypatch.setenv("GSPO_HOME", str(cluster.home))
    return cluster


def test_the_nodes_register_their_gpus(cluster):
    info = json.loads(cluster.gspo("node-a", "cluster", "status", "--json").stdout)
    assert sorted(n["name"] for n in info["nodes"]) == list(NAMES)
    assert all(n["resources"].get("GPU") == 8 and "NPU" not in n["resources"] for n in info["nodes"]), info["nodes"]


def test_every_gpu_preset_passes_and_too_big_or_npu_ones_are_refused(on_node_a):
    presets = sim.shipped_presets_on("cuda")
    assert {"qwen3-0.6b-1x1", "qwen3-32b-4x8-h100"} <= set(presets), presets
    sim.prepare_data(on_node_a, "qwen3-32b-4x8-h100")
    rows = [sim.Row(name) for name in presets] + [sim.Row(name, sets, expect_fit=False) for name, sets in TOO_BIG]
    t0 = time.monotonic()
    with sim.runners(on_node_a) as run:
        for row in rows:
            sim.judge(on_node_a, run, row, "cuda")
        # an Ascend preset on GPU nodes: its job asks for NPU slots, which no node offers
        npu = sim.judge(on_node_a, run, sim.Row("qwen3-8b-2x8", expect_fit=False), "npu")
    on_node_a.timings["presets_s"] = time.monotonic() - t0
    print("\nSimulated GPU cluster: 4 nodes x 8 GPU (gspo cluster up/join --ray-arg=--num-gpus=8)\n"
          + sim.table([*rows, npu], "GPU"))
    assert all(r.ok for r in rows), [r for r in rows if not r.ok]
    assert npu.capacity.startswith("exit 75: 0 of 16 device slots (NPU) on 4 alive node(s)"), npu
    assert npu.placement.startswith("not placed"), npu

"""Integration: `gspo cluster up` starts a real Ray head on 127.0.0.1 (NPU count from a fake npu-smi), then
`gspo env doctor --cluster` runs one pinned probe task per node against it, then `gspo cluster down` stops only
the head gspo started. The fixture always stops it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import uuid

import pytest
from env_hosts import make_host

pytestmark = [pytest.mark.timeout(420), pytest.mark.ray, pytest.mark.slow]  # a real Ray cluster: not in make test-fast


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_head(tmp_path):
    host = make_host(tmp_path / "h", stack=None)  # for its fake npu-smi (A3, 16 dies) on PATH
    bin_dir = host.env["PATH"].split(":")[0]
    gspo_home = tmp_path / "gspo_home"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GSPO_HOME": str(gspo_home),
           "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    port, dash = _free_port(), _free_port()
    temp_dir = f"/tmp/gspo-t-{uuid.uuid4().hex[:6]}"  # short: Ray's socket paths are length-limited
    cmd = [sys.executable, "-m", "gspo_cli", "cluster", "up", "--preset", "qwen3-32b", "--set", "cluster.nnodes=1",
           "--port", str(port), "--dashboard-port", str(dash), "--node-ip", "127.0.0.1", "--temp-dir", temp_dir,
           "--stack", "vllm-ascend==0.23.0", "--wait", "120"]
    up = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
    try:
        yield {"env": env, "port": port, "dash": dash, "up": up, "home": gspo_home}
    finally:
        down = subprocess.run([sys.executable, "-m", "gspo_cli", "cluster", "down"], capture_output=True, text=True,
                              env=env, timeout=120)
        record_files = list((gspo_home / "ray" / "nodes").glob("*.json")) if (gspo_home / "ray").exists() else []
        shutil.rmtree(temp_dir, ignore_errors=True)  # the test's own Ray temp dir (gspo itself never deletes one)
        assert not record_files, down.stderr


def test_cluster_up_doctor_cluster_down(ray_head):
    up = ray_head["up"]
    assert up.returncode == 0, up.stderr[-3000:]
    assert "All 16 NPUs registered" in up.stderr
    polled = [ln for ln in up.stderr.splitlines() if "NPU registered:" in ln]
    assert len(polled) == len(set(polled)), polled  # the 2 s poll prints changes only
    assert "dropped VLLM_USE_V1" in up.stderr
    record = json.loads(next((ray_head["home"] / "ray" / "nodes").glob("*.json")).read_text())
    assert record["npus"] == 16 and '--resources={"NPU": 16}' in record["argv"]
    res = subprocess.run(
        [sys.executable, "-m", "gspo_cli", "env", "doctor", "--cluster", "--address", f"127.0.0.1:{ray_head['port']}",
         "--preset", "qwen3-32b", "--set", "cluster.nnodes=1", "--json"],
        capture_output=True, text=True, env=ray_head["env"], timeout=240)
    data = json.loads(res.stdout)
    status = {(c["name"], c["node"]): c["status"] for c in data["checks"]}
    cross = {cid: s for (cid, node), s in status.items() if not node}
    assert cross["ray.reachable"] == "ok"
    assert cross["ray.nodes"] == "ok"
    assert cross["ray.npu_total"] == "ok"
    assert cross["ray.gpu_key"] == "ok"
    assert cross["cluster.npu_count"] == "ok"  # the node's own npu-smi (fake, via the raylet's PATH) says 16
    assert cross["cluster.gspo_home"] == "ok"
    node = data["facts"][0]["node"]  # its gspo-node label (the hostname), or its IP
    assert len(data["facts"]) == 1 and node and data["facts"][0]["node_ip"]
    assert status[("npu.smi", node)] == "ok", status
    assert res.returncode == 1  # this CPU box has no CANN: the per-node rows fail, with fixes

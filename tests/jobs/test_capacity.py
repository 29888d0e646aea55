"""The job wrapper after a node loss: the device-slot check (jobs/capacity.py) and what the wrapper does with it
(jobs/supervise.py): a training process that waits for a placement group that can no longer form is stopped and
the job ends with one line saying which node was lost, how many slots are left and what the job needs; a job
that cannot be placed is not started. The real 3-node run is tests/engine/test_verl_multinode.py."""

from __future__ import annotations

import sys

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.jobs import capacity, placement, supervise
from gspo_cli.metrics.health import read_events


def _node(name: str, state: str = "ALIVE", gpu: float = 1, ended_at: float | None = None) -> dict:
    return {"node_id": name * 4, "name": name, "node_ip": "127.0.0.1", "is_head": name == "node-a", "state": state,
            "resources": {"CPU": 16.0, "GPU": gpu}, "death": None, "ended_at": ended_at}


THREE = capacity.Need("GPU", 3, 1)


def test_the_need_follows_the_preset_and_its_resolved_device():
    from gspo_cli.config import devices
    from gspo_cli.engines.verl.cluster import cluster_need
    from gspo_cli.engines.verl.launch import on_device

    assert cluster_need(load_preset("tiny-verl", ["cluster.nnodes=3"])) == THREE  # CPU "devices" are GPU slots
    assert cluster_need(load_preset("qwen3-32b-4x16")) == capacity.Need("NPU", 4, 16)
    assert cluster_need(load_preset("qwen3-32b-4x8-h100")) == capacity.Need("GPU", 4, 8)
    auto = load_preset("qwen3-0.6b-1x1")
    assert auto.cluster.device == "auto"
    on_ascend = devices.resolve(auto.cluster.device, detect=lambda: ("npu", "torch_npu is installed here"))
    assert cluster_need(on_device(auto, on_ascend.name)) == capacity.Need("NPU", 1, 1)
    # the job file carries the need to the wrapper
    assert capacity.Need.from_json(THREE.to_json()) == THREE and capacity.Need.from_json(None) is None


def test_auto_is_resolved_as_verl_resolves_it():
    from gspo_cli.config import devices

    found = {"torch_npu"}
    assert devices.verl_auto(which=lambda _: None, installed=found.__contains__)[0] == "npu"
    assert devices.verl_auto(which=lambda _: "/usr/bin/nvidia-smi", installed=found.__contains__)[0] == "cuda"
    assert devices.verl_auto(which=lambda _: None, installed=lambda _: False)[0] == "cuda"  # verl's fallback
    assert devices.resolve("npu").name == "npu" and devices.resolve("cpu").device.ray_resource is None


def test_shortfall_names_the_lost_node_and_counts_slots():
    rows = [_node("node-a"), _node("node-b"), _node("node-c", "DEAD", ended_at=200.0), _node("old", "DEAD",
                                                                                            ended_at=50.0)]
    assert capacity.shortfall(THREE, rows, since=100.0) == (
        "node node-c lost; 2 of 3 device slots (GPU) left on 2 alive node(s); the job needs 3 (3 node(s) x 1) "
        "[run-cluster-short]")
    assert capacity.shortfall(THREE, [*rows, _node("node-d")]) is None  # a spare node took its place
    # Enough slots in total but not per node: verl's per-node groups could not form either.
    uneven = [_node("node-a", gpu=2), _node("node-b")]
    assert "2 alive node(s)" in capacity.shortfall(THREE, uneven)
    # More slots in total than one node holds: said per node, not as a total the cluster seems to have.
    npus = [{**_node(n), "resources": {"CPU": 64.0, "NPU": 16.0}} for n in ("a", "b", "c", "d")]
    assert capacity.shortfall(capacity.Need("NPU", 1, 32), npus) == (
        "0 of 4 alive node(s) hold 32 device slots (NPU) (the most on one node: 16); the job needs 32 (1 node(s) x 32) "
        "[run-cluster-short]")


def test_trainer_ranks_follow_verls_creation_order():
    names = ["xWorkerDict_1:0", "xWorkerDict_0:1", "xWorkerDict_0:0", "xWorkerDict_1:1", "vllm_server_0_0"]
    assert placement.trainer_ranks(names) == {"xWorkerDict_0:0": 0, "xWorkerDict_0:1": 1, "xWorkerDict_1:0": 2,
                                              "xWorkerDict_1:1": 3}
    assert placement.role("create_colocated_worker_cls.<locals>.WorkerDict") == "verl trainer rank"


def _child(tmp_path, check) -> supervise.Child:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # A trainer that waits forever, as verl does in ray.get(pg.ready()) for a placement group that cannot form.
    waiting = [sys.executable, "-c", "import time; print('waiting for placement groups', flush=True); "
               "time.sleep(600)"]
    return supervise.Child(name="verl", run_dir=run_dir, metrics=run_dir / "metrics.jsonl",
                           command=lambda i, step: waiting, cwd=run_dir, capacity=check)


def test_a_trainer_waiting_after_a_node_loss_is_stopped_with_the_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(supervise, "CAPACITY_POLL_S", 0.2)
    calls: list[int] = []

    rows = [_node("node-a"), _node("node-b"), _node("node-c")]
    lost = [_node("node-a"), _node("node-b"), _node("node-c", "DEAD", ended_at=1.0)]
    real = capacity.checker(THREE, since=0.0, run_name="r", rows=lambda: rows if len(calls) < 4 else lost)

    def check():  # the node is lost after the attempt started
        calls.append(1)
        return real()

    child = _child(tmp_path, check)
    code = supervise.supervise(child, load_preset("tiny", ["trainer.restart.kill_grace_s=2"]))
    assert code == supervise.NO_CAPACITY_EXIT == 75
    (failed,) = read_events(child.run_dir / "health.jsonl")
    assert failed["action"] == "fail" and failed["message"].startswith("capacity failure after 1 attempt(s): node "
                                                                      "node-c lost; 2 of 3 device slots (GPU)")
    err = capsys.readouterr().err
    assert "verl cannot be placed on the cluster: node node-c lost; 2 of 3 device slots (GPU) left on 2 alive " \
           "node(s); the job needs 3 (3 node(s) x 1) [run-cluster-short]: rejoin the node" in err
    assert "`gspo train --resume r` continues from the last complete checkpoint" in err


def test_a_cluster_that_never_had_the_slots_is_told_to_start_them_not_to_rejoin():
    check = capacity.checker(THREE, since=100.0, run_name="r", rows=lambda: [_node("node-a", gpu=0)])
    said = check()
    assert said.startswith("0 of 3 device slots (GPU) on 1 alive node(s); the job needs 3 (3 node(s) x 1) "
                           "[run-cluster-short]: start every node")
    assert "start every node with its devices" in said and "capacity_check: false" in said
    assert "rejoin" not in said and "--resume" not in said


def test_an_unreadable_node_table_is_said_once_per_cause_and_never_stops_the_job():
    from gspo_cli.jobs import events

    readings = iter([TimeoutError("the head is busy"), TimeoutError("the head is busy"), ConnectionError("refused"),
                     [_node("node-a", gpu=0)], TimeoutError("the head is busy")])

    def rows():
        reading = next(readings)
        if isinstance(reading, Exception):
            raise reading
        return reading

    said: list[dict] = []
    previous = events.set_sink(said.append)
    try:
        check = capacity.checker(THREE, since=0.0, run_name="r", rows=rows)
        verdicts = [check() for _ in range(5)]
    finally:
        events.set_sink(previous)
    assert verdicts[:3] == [None, None, None] and verdicts[4] is None  # unknown: never a stop
    assert verdicts[3] is not None and verdicts[3].startswith("0 of 3 device slots")  # control: a table is counted
    skipped = "capacity check skipped: cannot read the cluster's node table ({}); asked again at the next poll"
    assert [e["text"] for e in said if e["kind"] == "message"] == [
        skipped.format("TimeoutError: the head is busy"),  # said once while the cause stays the same
        skipped.format("ConnectionError: refused"),
        skipped.format("TimeoutError: the head is busy"),  # said again after a reading went through
    ]


def test_a_job_the_cluster_cannot_hold_is_not_started(tmp_path, capsys):
    child = _child(tmp_path, lambda: "1 of 3 device slots (GPU) left on 1 alive node(s); the job needs 3")
    child.command = lambda i, step: pytest.fail("no attempt may start")
    code = supervise.supervise(child, load_preset("tiny"))
    assert code == 75
    assert "cannot be placed on the cluster: 1 of 3 device slots" in capsys.readouterr().err

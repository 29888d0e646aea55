"""What a Ray node offers is the engine's answer (engines/spec.py `node_resources`), spelled for Ray by
jobs/resources.py: the embedded head and `cluster up/join` ask the engine, and never decide on engine or device
names themselves."""

from __future__ import annotations

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.engines import node_resources
from gspo_cli.jobs.resources import NodeResources, actor_options


def test_ray_spelling_of_resources():
    offer = NodeResources(num_cpus=16, resources={"GPU": 2.0, "NPU": 16.0, "custom": 0.5})
    assert offer.start_args() == ["--num-cpus=16", "--num-gpus=2", '--resources={"NPU": 16, "custom": 0.5}']
    assert offer.start_args(num_cpus=4)[0] == "--num-cpus=4"  # the user's --num-cpus wins
    assert NodeResources().start_args() == [] and not NodeResources()
    assert offer.missing_from({"GPU": 1, "NPU": 16, "custom": 1}) == {"GPU": 2.0}
    assert actor_options("GPU", 2) == {"num_gpus": 2} and actor_options("NPU", 2) == {"resources": {"NPU": 2}}
    assert actor_options(None, 2) == {}


def _plan(preset_name: str, host_factory, metrics: bool = False, **kw):
    from gspo_cli.env.probes import collect_facts
    from gspo_cli.env.raystart import plan

    preset = load_preset(preset_name)
    host = host_factory(**kw)
    facts = collect_facts(host, with_python=False)
    return plan(preset, role="head", facts=facts, host=host, node_ip="127.0.0.1", stack="0.23.0",
                node=node_resources(preset), metrics=metrics)


def test_cluster_up_of_a_cpu_verl_preset_offers_its_device_slots(host_factory):
    p = _plan("tiny-verl", host_factory, board=None, cann=None)
    assert "--num-gpus=1" in p["argv"] and any(a.startswith("--num-cpus=") and int(a.split("=")[1]) >= 16
                                                for a in p["argv"])
    assert not any(a.startswith("--resources=") for a in p["argv"]) and p["npus"] == 0


def test_cluster_up_of_an_npu_preset_registers_the_npus_and_nothing_else(host_factory):
    p = _plan("qwen3-32b-4x16", host_factory)
    assert '--resources={"NPU": 16}' in p["argv"] and p["npus"] == 16
    assert not any(a.startswith(("--num-gpus", "--num-cpus")) for a in p["argv"])
    assert p["env"]["RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"] == "1"
    native = _plan("tiny", host_factory, board=None, cann=None)
    assert not any(a.startswith(("--num-gpus", "--num-cpus", "--resources")) for a in native["argv"])


def test_cluster_up_switches_the_unauthenticated_exporters_off_unless_asked(host_factory, monkeypatch):
    from gspo_cli.jobs import exporters

    monkeypatch.delenv("AUTOSCALER_METRIC_PORT", raising=False)
    monkeypatch.delenv("DASHBOARD_METRIC_PORT", raising=False)
    for metrics in (False, True):
        env = _plan("tiny", host_factory, board=None, cann=None, metrics=metrics)["env"]
        assert (env.get("AUTOSCALER_METRIC_PORT") == exporters.UNBINDABLE_PORT) is (not metrics)
        assert (env.get("DASHBOARD_METRIC_PORT") == exporters.UNBINDABLE_PORT) is (not metrics)
        assert env["RAY_enable_metrics_collection"] == ("1" if metrics else "0")


def _wait_status(client, job_id: str, wanted: set[str], timeout: float = 120) -> str:
    import time

    deadline = time.monotonic() + timeout
    status = ""
    while time.monotonic() < deadline:
        status = str(client.get_job_status(job_id)).rsplit(".", 1)[-1]
        if status in wanted:
            return status
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} still {status} after {timeout} s")


@pytest.mark.ray
@pytest.mark.slow
def test_one_embedded_head_serves_native_then_verl_restarted_only_while_idle(gspo_home, capfd):
    """The first hour's route: a native job's head (no GPU slots) is then asked for a verl CPU run's GPU slot.
    While a job runs on it the head is NOT restarted (the job would die): the verl job is refused, naming the job.
    Once idle, the head is restarted with the slot, saying so on stderr; the native route keeps using that head;
    `cluster down` stops it and nothing of its process group is left."""
    from gspo_cli.errors import ClusterError
    from gspo_cli.jobs import client, local_head, procs, target

    tiny, tiny_verl = load_preset("tiny"), load_preset("tiny-verl")
    wants = node_resources(tiny_verl)
    try:
        native = target.resolve_target(None, tiny, node=node_resources(tiny))
        first = local_head.read_record()
        assert first.resources == {} and native.local_only
        jobs = client.client(native)
        busy = jobs.submit_job(entrypoint="sleep 300", submission_id="i33-busy")
        _wait_status(jobs, busy, {"RUNNING"})
        with pytest.raises(ClusterError) as refused:  # the control: a busy head is not restarted
            target.resolve_target(None, tiny_verl, node=wants)
        print(refused.value.message)
        assert refused.value.message == (
            "the embedded Ray head runs with GPU=0; a verl CPU run of tiny-verl places its 1 CPU device(s) on Ray "
            "GPU slots needs GPU=1, and it runs 1 job(s) (i33-busy), so gspo does not restart it")
        assert "gspo jobs stop" in refused.value.hint
        assert local_head.running().pid == first.pid and _wait_status(jobs, busy, {"RUNNING"}) == "RUNNING"
        jobs.stop_job(busy)
        _wait_status(jobs, busy, {"STOPPED", "FAILED"})
        capfd.readouterr()
        verl = target.resolve_target(None, tiny_verl, node=wants)  # idle now: restarted with the slot
        said = capfd.readouterr().err
        print(said)
        assert ("Restarted the embedded Ray head with GPU=1 (a verl CPU run of tiny-verl places its 1 CPU device(s) "
                "on Ray GPU slots); it ran no job.") in said
        second = local_head.read_record()
        assert second.pid != first.pid and second.resources == {"GPU": 1.0} and verl.local_only
        assert not procs.group_alive(first.pid)  # the old head is gone, not left beside the new one
        import time

        deadline = time.monotonic() + 120
        status = client.cluster_status()  # the embedded head, with its token
        while not status["resources"] and time.monotonic() < deadline:  # the state API lists a new node late
            time.sleep(1)
            status = client.cluster_status()
        print(status["resources"])
        assert status["resources"]["GPU"] == 1 and status["resources"]["CPU"] >= 16
        assert target.resolve_target(None, tiny_verl, node=wants).dashboard_url == verl.dashboard_url
        again = target.resolve_target(None, tiny, node=node_resources(tiny))  # native on the same head
        assert again.dashboard_url == verl.dashboard_url and local_head.read_record().pid == second.pid
        assert local_head.stop() is not None
        assert not procs.group_alive(second.pid) and local_head.read_record() is None
    finally:
        local_head.stop()

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


@pytest.mark.ray
@pytest.mark.slow
def test_the_embedded_head_offers_what_the_engine_asks(gspo_home):
    """A verl CPU preset's jobs start the embedded head with its CPU "devices" as Ray GPU slots; a head started
    without them is refused with how to restart it, and a head with them serves the next job."""
    import time

    from gspo_cli.errors import ClusterError
    from gspo_cli.jobs import client, local_head, target

    tiny_verl = load_preset("tiny-verl")
    wants = node_resources(tiny_verl)
    try:
        target.resolve_target(None, load_preset("tiny"), node=node_resources(load_preset("tiny")))
        with pytest.raises(ClusterError) as refused:
            target.resolve_target(None, tiny_verl, node=wants)
        print(refused.value.message)
        assert refused.value.message == ("the embedded Ray head runs with GPU=0; a verl CPU run of tiny-verl places its "
                                         "1 CPU device(s) on Ray GPU slots needs GPU=1")
        assert "gspo cluster down" in refused.value.hint
        local_head.stop()
        started = target.resolve_target(None, tiny_verl, node=wants)
        deadline = time.monotonic() + 120
        status = client.cluster_status()  # the embedded head, with its token
        while not status["resources"] and time.monotonic() < deadline:  # the state API lists a new node late
            time.sleep(1)
            status = client.cluster_status()
        print(status["resources"])
        assert status["resources"]["GPU"] == 1 and status["resources"]["CPU"] >= 16
        assert local_head.read_record().resources == {"GPU": 1.0}
        again = target.resolve_target(None, tiny_verl, node=wants)
        assert again.dashboard_url == started.dashboard_url
    finally:
        local_head.stop()

"""npu-smi parsing across layouts, the version matrix, and `gspo env exports`."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest
from env_hosts import A2_INFO, A3_26X, A3_INFO, make_host

from gspo_cli.config.presets import load_preset
from gspo_cli.env import matrix
from gspo_cli.env.exports import build, parse_stack
from gspo_cli.env.npusmi import parse_info


def test_parse_a3_and_26x_by_pattern():
    a3 = parse_info(A3_INFO)
    wide = parse_info(A3_26X)
    assert len(a3["devices"]) == len(wide["devices"]) == 16
    # same devices, same HBM, whatever the column layout (incl. `62308/ 65536` and `3142/65536`)
    key = [(d["npu"], d["chip"], d["phy_id"], d["bus_id"], d["hbm_used_mb"], d["hbm_total_mb"]) for d in a3["devices"]]
    assert key == [(d["npu"], d["chip"], d["phy_id"], d["bus_id"], d["hbm_used_mb"], d["hbm_total_mb"])
                   for d in wide["devices"]]
    assert a3["devices"][4]["hbm_used_mb"] == 62308 and a3["devices"][15]["phy_id"] == 15
    assert wide["version"] == "26.0.rc1"
    a2 = parse_info(A2_INFO)
    assert [d["name"] for d in a2["devices"]] == ["910B3"] * 8 and a2["devices"][0]["phy_id"] is None


def test_version_order_and_rows():
    assert matrix.vkey("8.3.RC2") < matrix.vkey("8.3.0") < matrix.vkey("8.5.0") < matrix.vkey("9.1.0")
    assert matrix.vkey("0.23.0rc1") < matrix.vkey("0.23.0") < matrix.vkey("0.23.0.post1")
    assert matrix.find_row("0.23.0").cann == ("9.1.0",)
    assert matrix.find_row("0.23.0rc1").torch_npu == ("2.10.0.post2",)
    assert matrix.find_row("0.99.0") is None
    assert all(row.source.startswith("https://") for row in matrix.STACK_MATRIX)
    assert all(o.source for o in matrix.OBSOLETE_VARS)


def test_exports_for_023_drop_obsolete(tmp_path):
    host = make_host(tmp_path, stack=None)
    from gspo_cli.env.probes import collect_facts

    facts = collect_facts(host, with_python=False)
    ex = build(load_preset("qwen3-32b"), host=host, stack="0.23.0", facts=facts, head="10.0.0.1:6379")
    exported = {n: v for n, v, _ in ex.exports}
    assert exported == {
        "RAY_DEDUP_LOGS": "0", "HYDRA_FULL_ERROR": "1", "TASK_QUEUE_ENABLE": "1", "HCCL_ASYNC_ERROR_HANDLING": "0",
        "HCCL_EXEC_TIMEOUT": "3600", "HCCL_CONNECT_TIMEOUT": "3600", "CPU_AFFINITY_CONF": "1",
        "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": "1",
        "LD_PRELOAD": "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
        "HCCL_SOCKET_IFNAME": "enp189s0f0", "GLOO_SOCKET_IFNAME": "enp189s0f0", "TP_SOCKET_IFNAME": "enp189s0f0",
        "HCCL_IF_IP": "10.0.0.2",
    }
    assert [d["name"] for d in ex.dropped] == ["VLLM_USE_V1", "VLLM_ATTENTION_BACKEND", "VLLM_ASCEND_ENABLE_FLASHCOMM",
                                               "VLLM_ASCEND_ENABLE_PREFETCH_MLP", "VLLM_ASCEND_ENABLE_DENSE_OPTIMIZE"]
    assert ex.overrides == ["+actor_rollout_ref.rollout.engine_kwargs.vllm.additional_config.enable_flashcomm1=True"]
    sh = ex.as_sh()
    assert "export VLLM_" not in sh and "# dropped VLLM_ASCEND_ENABLE_FLASHCOMM=1" in sh
    # the script is valid shell and sets what it says
    out = subprocess.run(["bash", "-c", sh + "\nenv"], capture_output=True, text=True, check=True).stdout
    assert "TP_SOCKET_IFNAME=enp189s0f0" in out and "VLLM_USE_V1" not in out
    assert "\nulimit -n 32768\n" in sh and ex.as_dict()["nofile"] == 32768
    # the job env is the same result without what only this host decides
    assert ex.job_env() == {k: v for k, v in exported.items() if k not in (
        "LD_PRELOAD", "HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_IF_IP")}


@pytest.mark.slow
def test_job_env_is_judged_against_the_presets_stack_and_refuses_verl_owned_keys():
    import pytest

    from gspo_cli.env.exports import job_env
    from gspo_cli.errors import ConfigError

    fitted = job_env(load_preset("qwen3-32b"))
    assert (fitted.stack, fitted.stack_source) == ("0.23.0", "preset env.vllm_ascend")
    assert "VLLM_USE_V1" not in fitted.job_env() and fitted.job_env()["HCCL_EXEC_TIMEOUT"] == "3600"
    p = load_preset("qwen3-32b")
    p.env.vars = {**p.env.vars, "PYTHONHASHSEED": "0"}
    with pytest.raises(ConfigError) as info:
        job_env(p)
    assert "verl sets PYTHONHASHSEED itself (verl/trainer/constants_ppo.py" in info.value.message
    assert "actor_rollout_ref.rollout.seed" in info.value.hint


def test_hccl_exec_timeout_respects_the_aiv_cap(tmp_path):
    host = make_host(tmp_path, stack=None)
    p = load_preset("qwen3-32b")
    p.env.vars = {**p.env.vars, "HCCL_OP_EXPANSION_MODE": "AIV"}
    ex = build(p, host=host, stack="0.23.0", facts={"jemalloc": None})
    timeout = next((v, why) for n, v, why in ex.exports if n == "HCCL_EXEC_TIMEOUT")
    assert timeout[0] == "1091" and "treated as 1091" in timeout[1]
    assert dict((n, v) for n, v, _ in ex.exports)["HCCL_CONNECT_TIMEOUT"] == "3600"  # not an execution timeout
    p.env.vars = {**p.env.vars, "HCCL_OP_EXPANSION_MODE": "HOST"}
    assert dict((n, v) for n, v, _ in build(p, host=host, stack="0.23.0", facts={}).exports)["HCCL_EXEC_TIMEOUT"] \
        == "3600"


def test_exports_quote_and_adapt(tmp_path):
    host = make_host(tmp_path, jemalloc=False)
    p = load_preset("qwen3-32b", ["rollout.enforce_eager=true"])
    p.env.vars = {**p.env.vars, "WEIRD": "a b'c"}
    ex = build(p, host=host, stack="0.11.0", facts={"jemalloc": None})
    exported = {n: v for n, v, _ in ex.exports}
    assert exported["TASK_QUEUE_ENABLE"] == "2"  # eager rollout
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM" in exported  # still read by 0.11
    assert [d["name"] for d in ex.dropped] == ["VLLM_USE_V1"]
    assert "LD_PRELOAD" not in exported and any("jemalloc" in n for n in ex.notes)
    line = next(x for x in ex.as_sh().splitlines() if x.startswith("export WEIRD="))
    assert shlex.split(line.split("=", 1)[1]) == ["a b'c"]


def test_parse_stack():
    assert parse_stack("vllm-ascend==0.23.0") == "0.23.0"
    import pytest

    from gspo_cli.errors import ConfigError

    with pytest.raises(ConfigError):
        parse_stack("vllm==0.23.0")


def _gspo(*args, env=None):
    return subprocess.run([sys.executable, "-m", "gspo_cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


@pytest.mark.slow
def test_cli_exports_and_doctor_json(tmp_path):
    res = _gspo("env", "exports", "--preset", "qwen3-32b", "--stack", "vllm-ascend==0.23.0")
    assert res.returncode == 0, res.stderr
    assert "export VLLM_" not in res.stdout and "enable_flashcomm1" in res.stdout
    res = _gspo("env", "exports", "--preset", "qwen3-32b", "--stack", "vllm-ascend==0.23.0", "--format", "json")
    assert json.loads(res.stdout)["stack"] == {"vllm-ascend": "0.23.0", "source": "--stack"}
    env = {"GSPO_HOME": str(tmp_path / "home"), "VLLM_API_KEY": "do-not-print-me"}
    res = _gspo("env", "doctor", "--json", env=env)
    data = json.loads(res.stdout)
    assert res.returncode == data["exit_code"] == 0
    assert "do-not-print-me" not in res.stdout + res.stderr
    res = _gspo("env", "doctor", "--json", "--preset", "qwen3-32b", env=env)
    data = json.loads(res.stdout)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    fails = [c for c in data["checks"] if c["status"] == "error"]
    assert fails and all(c["fix"] for c in fails)
    res = _gspo("env", "exports", "--stack", "vllm==1")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    res = _gspo("env", "doctor", "--cluster", "--address", "127.0.0.1:1", env=env)
    assert res.returncode == 1 and "cannot reach the Ray GCS at 127.0.0.1:1" in res.stderr
    assert "Traceback" not in res.stderr


def test_exports_on_the_head_itself_use_the_interface_holding_its_address(tmp_path):
    """`ip route get <own address>` says `local ... dev lo`: HCCL/GLOO on lo would be unreachable from workers."""
    host = make_host(tmp_path, stack=None)
    ip = os.path.join(host.env["PATH"].split(":")[0], "ip")
    with open(ip, "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = "-o" ]; then\n'
                'echo "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever"\n'
                'echo "3: enp189s0f0@if7    inet 10.0.0.2/24 brd 10.0.0.255 scope global enp189s0f0"\n'
                'else echo "local $3 dev lo src $3 uid 0"; fi\n')
    preset = load_preset("qwen3-32b")
    exported = {n: v for n, v, _ in build(preset, host=host, stack="0.23.0", head="10.0.0.2:6379").exports}
    assert exported["HCCL_SOCKET_IFNAME"] == exported["GLOO_SOCKET_IFNAME"] == "enp189s0f0"
    assert exported["HCCL_IF_IP"] == "10.0.0.2"
    # a loopback head (single-node tests) stays on lo
    exported = {n: v for n, v, _ in build(preset, host=host, stack="0.23.0", head="127.0.0.1:6379").exports}
    assert exported["GLOO_SOCKET_IFNAME"] == "lo"
    # an address this host does not hold: no interface variables, a note instead
    with open(ip, "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = "-o" ]; then echo "1: lo    inet 127.0.0.1/8 scope host lo"; '
                'else echo "local $3 dev lo src $3 uid 0"; fi\n')
    ex = build(preset, host=host, stack="0.23.0", head="10.0.0.9:6379")
    assert "GLOO_SOCKET_IFNAME" not in {n for n, _, _ in ex.exports}
    assert any("10.0.0.9 is local but on no interface" in n for n in ex.notes)

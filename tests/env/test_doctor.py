"""Doctor checks over fixture hosts: exact statuses per scenario (real probes, real subprocesses, fake tools)."""

from __future__ import annotations

from env_hosts import A2_INFO, A3_INFO, CLEAN_VARS, STACK_011, STACK_023, a3_idle

from gspo_cli.config.presets import load_preset
from gspo_cli.env.checks import by_name, exit_code, local_checks
from gspo_cli.env.probes import collect_facts


def run(host, preset):
    facts = collect_facts(host, extra_env=tuple(preset.env.vars) if preset is not None else ())
    checks = local_checks(facts, preset)
    return facts, checks, by_name(checks)


def clean_preset(**sets):
    sets.setdefault("cluster.host_memory_gib", 1536)
    p = load_preset("qwen3-32b", [f"{k}={v}" for k, v in sets.items()])
    p.env.vars = dict(CLEAN_VARS)
    return p


CLEAN_A3 = {
    "cann.install": "ok", "cann.set_env": "ok", "cann.nnal": "ok", "cann.hccl": "ok", "driver.version": "ok",
    "npu.smi": "ok", "npu.health": "ok", "npu.hbm": "ok", "npu.count": "ok", "npu.board": "ok", "npu.link": "ok",
    "npu.processes": "ok", "stack.known_bad": "ok",
    "ray.npu_detect": "ok", "python.version": "ok", "stack.verl": "ok", "stack.torch_npu": "ok",
    "stack.matrix": "ok", "env.task_queue": "ok", "env.ld_preload": "ok", "env.jemalloc": "ok",
    "env.ifname.HCCL_SOCKET_IFNAME": "ok", "env.hccl_timeout": "ok", "gspo.home": "ok", "node.nofile": "ok",
    "node.memory": "ok",
}


def test_clean_a3_host_cann9(host_factory):
    host = host_factory(stack=STACK_023, env={"LD_PRELOAD": "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
                                              "HCCL_SOCKET_IFNAME": "enp189s0f0", "HCCL_EXEC_TIMEOUT": "1000",
                                              "HCCL_OP_EXPANSION_MODE": "AIV"})
    facts, checks, status = run(host, clean_preset())
    assert status == CLEAN_A3, [c for c in checks if c.status != "ok"]
    assert exit_code(checks) == 0
    assert facts["cann"]["layout"] == "cann" and facts["cann"]["version"] == "9.1.0"
    assert facts["cann"]["home"] == "/usr/local/Ascend/cann"
    assert facts["driver"]["version"] == "24.1.0"  # package_version= preferred
    assert len(facts["npu"]["devices"]) == 16 and facts["npu"]["board"]["kind"] == "a3"
    found = {c.name: c.message for c in checks}
    assert "16 device(s): Ascend910 (A3)" == found["npu.smi"]


def test_a2_host_cann83_layout(host_factory):
    host = host_factory(board="a2", cann="8.3.RC2", stack=STACK_011)
    p = clean_preset(**{"cluster.devices_per_node": 8, "cluster.profile": "a2-910b"})
    p.env.jemalloc = False
    facts, checks, status = run(host, p)
    assert facts["cann"]["layout"] == "ascend-toolkit" and facts["cann"]["version"] == "8.3.RC2"
    assert facts["cann"]["home"] == "/usr/local/Ascend/ascend-toolkit/latest"
    assert facts["npu"]["board"] == {"kind": "a2", "npu_name": None, "chip_name": "910B4", "chip_type": "Ascend"}
    assert {k: status[k] for k in ("cann.install", "cann.set_env", "npu.smi", "npu.count", "npu.board",
                                   "npu.health", "npu.hbm", "stack.matrix", "stack.torch_npu", "ray.npu_detect")} \
        == dict.fromkeys(("cann.install", "cann.set_env", "npu.smi", "npu.count", "npu.board", "npu.health",
                          "npu.hbm", "stack.matrix", "stack.torch_npu", "ray.npu_detect"), "ok")
    assert exit_code(checks) == 0


def test_a3_preset_on_a2_host_fails_count(host_factory, preset):
    host = host_factory(board="a2", cann="8.3.RC2", stack=STACK_011)
    _, _, status = run(host, preset)
    assert status["npu.count"] == "error" and status["npu.board"] == "warn"


def test_set_env_not_sourced(host_factory):
    host = host_factory(stack=STACK_023, sourced=False)
    _, checks, status = run(host, clean_preset())
    assert status["cann.install"] == "ok"
    assert status["cann.set_env"] == "error"
    assert status["cann.nnal"] == "warn"
    fix = next(c.fix for c in checks if c.name == "cann.set_env")
    assert fix.startswith("source /usr/local/Ascend/cann/set_env.sh")
    assert exit_code(checks) == 1


def test_version_mismatch(host_factory):
    # CANN 8.3.RC2 installed, but the Python stack is vllm-ascend 0.23.0 (needs CANN 9.1.0).
    host = host_factory(cann="8.3.RC2", stack=STACK_023)
    _, checks, status = run(host, clean_preset())
    assert status["stack.matrix"] == "error"
    assert status["stack.torch_npu"] == "error"
    found = {c.name: c.message for c in checks}
    assert "CANN 8.3.RC2 (needs 9.1.0)" in found["stack.matrix"]
    assert found["stack.torch_npu"] == "torch_npu 2.10.0.post4 is built for CANN 9.1.0, host has 8.3.RC2"
    # and a torch that does not match the row
    host = host_factory(stack={**STACK_023, "torch": "2.9.0"})
    _, checks, status = run(host, clean_preset())
    assert status["stack.matrix"] == "error" and "torch 2.9.0 (needs 2.10.0)" in {c.name: c.message for c in checks}[
        "stack.matrix"]


def test_sick_npu(host_factory):
    lines = a3_idle().splitlines()
    # NPU 3, die 1: the 4th device block's second die; its first row carries the health word.
    idx = [i for i, line in enumerate(lines) if line.startswith("| 3     Ascend910")][1]
    lines[idx] = lines[idx].replace("| OK            |", "| Critical      |")
    host = host_factory(stack=STACK_023, npu_info="\n".join(lines) + "\n")
    _, checks, status = run(host, clean_preset())
    assert status["npu.health"] == "error"
    assert {c.name: c.message for c in checks}["npu.health"] == "not OK: 3/1=Critical"
    assert exit_code(checks) == 1


def test_busy_hbm_and_down_link(host_factory):
    host = host_factory(stack=STACK_023, npu_info=A3_INFO, links_down=(5,))
    _, checks, status = run(host, clean_preset())
    assert status["npu.hbm"] == "warn" and status["npu.link"] == "error"
    assert "5=DOWN" in {c.name: c.message for c in checks}["npu.link"]
    # the real capture's process section: 8 PIDs on NPUs 2-7, named with the command that stops them
    (stale,) = [c for c in checks if c.name == "npu.processes"]
    assert stale.status == "warn" and "[npu-stale-process]" in stale.message
    assert "2268921 on 2/0" in stale.message and "2268924 on 2/0 2/1" in stale.message
    assert stale.fix.startswith("if they are left from an earlier run: kill 2268921 2268924 2268925 2268928 2905025")


def test_obsolete_variables_on_vllm_ascend_023(host_factory, preset):
    host = host_factory(stack=STACK_023)
    _, checks, status = run(host, preset)  # the upstream script's exports
    obsolete = {k: v for k, v in status.items() if k.startswith("env.obsolete.")}
    assert obsolete == {f"env.obsolete.{n}": "warn" for n in (
        "VLLM_USE_V1", "VLLM_ATTENTION_BACKEND", "VLLM_ASCEND_ENABLE_FLASHCOMM", "VLLM_ASCEND_ENABLE_PREFETCH_MLP",
        "VLLM_ASCEND_ENABLE_DENSE_OPTIMIZE")}
    fixes = {c.name: c.fix for c in checks}
    assert "enable_flashcomm1" in fixes["env.obsolete.VLLM_ASCEND_ENABLE_FLASHCOMM"]
    # vllm-ascend 0.11 still reads FLASHCOMM / PREFETCH_MLP / DENSE_OPTIMIZE; only VLLM_USE_V1 is stale there
    host = host_factory(board="a2", cann="8.3.RC2", stack=STACK_011)
    _, _, status = run(host, preset)
    assert {k for k in status if k.startswith("env.obsolete.")} == {"env.obsolete.VLLM_USE_V1"}


def test_aiv_timeout_cap(host_factory):
    host = host_factory(stack=STACK_023, env={"HCCL_OP_EXPANSION_MODE": "AIV", "HCCL_EXEC_TIMEOUT": "1800"})
    _, checks, status = run(host, clean_preset())
    assert status["env.hccl_timeout"] == "warn"
    assert "capped at 1091 s" in {c.name: c.message for c in checks}["env.hccl_timeout"]
    host = host_factory(stack=STACK_023, env={"HCCL_OP_EXPANSION_MODE": "HOST", "HCCL_EXEC_TIMEOUT": "1800"})
    assert run(host, clean_preset())[2]["env.hccl_timeout"] == "ok"


def test_missing_jemalloc(host_factory):
    host = host_factory(stack=STACK_023, jemalloc=False,
                        env={"LD_PRELOAD": "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"})
    _, checks, status = run(host, clean_preset())
    assert status["env.jemalloc"] == "warn"
    assert status["env.ld_preload"] == "error"
    assert exit_code(checks) == 1


def test_other_env_rules(host_factory):
    host = host_factory(stack=STACK_023, env={
        "HCCL_SOCKET_IFNAME": "eth9", "GLOO_SOCKET_IFNAME": "eth0", "TP_SOCKET_IFNAME": "eth",
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True", "PYTORCH_ALLOC_CONF": "expandable_segments:False",
    })
    p = clean_preset(**{"rollout.enforce_eager": "true"})
    _, _, status = run(host, p)
    assert status["env.ifname.HCCL_SOCKET_IFNAME"] == "error"
    assert status["env.ifname.GLOO_SOCKET_IFNAME"] == "ok"
    assert status["env.ifname.TP_SOCKET_IFNAME"] == "error"  # GLOO/TP take exact names, no prefixes
    assert status["env.alloc_conf"] == "warn"
    assert status["env.task_queue"] == "warn"  # 1 with eager mode: should be 2


def test_expert_parallel_moe_rollout_wants_the_hccl_buffer_vllm_ascend_sets(host_factory):
    """qwen3-30b-a3b (2 nodes, rollout EP 4): HCCL_BUFFSIZE 1024 as vllm-ascend's Qwen3-MoE multi-node EP; unset or
    smaller warns; a dense preset (EP 1) gets no such row."""
    moe = load_preset("qwen3-30b-a3b", ["cluster.host_memory_gib=1536"])
    host = host_factory(stack=STACK_023)
    _, checks, status = run(host, moe)  # the preset's own env.vars set HCCL_BUFFSIZE 1024
    assert status["env.moe_hccl_buffsize"] == "ok"
    moe.env.vars = {k: v for k, v in moe.env.vars.items() if k != "HCCL_BUFFSIZE"}
    _, checks, status = run(host, moe)
    fixes = {c.name: c.fix for c in checks}
    assert status["env.moe_hccl_buffsize"] == "warn" and 'HCCL_BUFFSIZE: "1024"' in fixes["env.moe_hccl_buffsize"]
    moe.env.vars = {**moe.env.vars, "HCCL_BUFFSIZE": "512"}
    assert run(host, moe)[2]["env.moe_hccl_buffsize"] == "warn"  # 512 is the one-node figure
    assert "env.moe_hccl_buffsize" not in run(host, clean_preset())[2]


def test_ray_npu_detection_without_acl(host_factory):
    host = host_factory(stack=STACK_023, acl_count=None)
    assert run(host, clean_preset())[2]["ray.npu_detect"] == "warn"  # glob still sees 16
    host = host_factory(stack=STACK_023, acl_count=None, davinci=10)
    _, checks, status = run(host, clean_preset())
    assert status["ray.npu_detect"] == "error"
    assert "sees 10 of 16" in {c.name: c.message for c in checks}["ray.npu_detect"]


def test_broken_torch_npu_does_not_take_doctor_down(host_factory):
    host = host_factory(stack=STACK_023, torch_npu_body="import os\nos._exit(139)\n")
    facts, checks, status = run(host, clean_preset())
    assert status["python.probe.torch_npu"] == "error"
    assert "crashed (exit 139)" in facts["python"]["torch_npu"]["error"]
    assert status["stack.matrix"] == "ok"  # versions still come from metadata


def test_no_ascend_host(tmp_path):
    from gspo_cli.env.host import Host

    (tmp_path / "bin").mkdir()
    host = Host(root=tmp_path, env={"PATH": str(tmp_path / "bin"), "HOME": "/home/u", "GSPO_HOME": "/g"})
    facts, checks, status = run(host, None)
    assert status == {"cann": "skip", "npu": "skip", "python.version": "ok", "stack.verl": "ok", "gspo.home": "ok",
                      "stack.known_bad": "ok"}
    _, checks, status = run(host, load_preset("qwen3-32b"))
    for cid in ("cann.install", "driver.version", "npu.smi", "stack.torch_npu", "stack.vllm_ascend"):
        assert status[cid] == "error"
    assert all(c.fix for c in checks if c.status == "error")
    assert status["env.obsolete"] == "skip"


def test_secrets_never_recorded(host_factory):
    host = host_factory(stack=STACK_023, env={"VLLM_API_KEY": "s3cr3t-value", "HCCL_TOKEN_X": "t0k3n"})
    facts, checks, _ = run(host, clean_preset())
    import json

    text = json.dumps(facts) + json.dumps([c.to_dict() for c in checks])
    assert "s3cr3t-value" not in text and "t0k3n" not in text
    assert facts["env"]["VLLM_API_KEY"] == "***"


def test_a2_info_parses_all_devices():
    from gspo_cli.env.npusmi import parse_info

    assert len(parse_info(A2_INFO)["devices"]) == 8


def test_cann_version_fallbacks_and_driver_field(host_factory):
    from gspo_cli.env.probes import probe_cann, probe_driver

    host = host_factory(cann="8.3.RC2", stack=STACK_011)
    home = host.path("/usr/local/Ascend/ascend-toolkit/8.3.RC2")
    (home / "aarch64-linux/ascend_toolkit_install.info").unlink()
    facts = probe_cann(host)
    assert (facts["version"], facts["version_file"]) == ("8.0.0", "/usr/local/Ascend/ascend-toolkit/latest/version.cfg")
    (home / "version.cfg").unlink()
    (home / "compiler/version.info").write_text("Version=8.3.RC2.alpha1\n")
    assert probe_cann(host)["version"] == "8.3.RC2.alpha1"
    (host.path("/usr/local/Ascend/driver/version.info")).write_text("Version=24.1.rc3\npackage_version=24.1.0\n")
    assert probe_driver(host)["version"] == "24.1.0"
    (host.path("/usr/local/Ascend/driver/version.info")).write_text("Version=24.1.rc3\n")
    assert probe_driver(host)["version"] == "24.1.rc3"


def test_cann_on_network_filesystem(host_factory):
    host = host_factory(stack=STACK_023)
    mounts = host.path("/proc/mounts")
    mounts.write_text(mounts.read_text() + "filer:/ascend /usr/local/Ascend nfs4 rw 0 0\n")
    _, checks, status = run(host, clean_preset())
    assert status["cann.netfs"] == "warn"
    assert "nfs4" in {c.name: c.message for c in checks}["cann.netfs"]


def test_gspo_home_not_shared_for_multi_node(host_factory):
    host = host_factory(stack=STACK_023, home_fs="ext4")
    assert run(host, clean_preset())[2]["gspo.home_shared"] == "warn"
    assert "gspo.home_shared" not in run(host, clean_preset(**{"cluster.nnodes": 1}))[2]


def test_cross_node_checks_pure(host_factory):
    from gspo_cli.env.cluster import cross_node_checks

    a = collect_facts(host_factory(stack=STACK_023))
    b = collect_facts(host_factory(stack={**STACK_023, "vllm-ascend": "0.23.0rc1"}, npu_info=A2_INFO, board="a2"))
    a.update(node_ip="10.0.0.1", marker="tok")
    b.update(node_ip="10.0.0.2", marker=None)
    p = clean_preset(**{"cluster.nnodes": 2})
    status = by_name(cross_node_checks([a, b], p, {"NPU": 24.0, "GPU": 8.0, "CPU": 64.0}, "tok"))
    assert status == {"ray.nodes": "ok", "ray.npu_total": "error", "ray.gpu_key": "error", "cluster.npu_count": "error",
                      "cluster.same.cann": "ok", "cluster.same.driver": "ok", "cluster.same.torch_npu": "ok",
                      "cluster.same.vllm_ascend": "error", "cluster.gspo_home": "error"}


def test_ray_start_plans(host_factory):
    from gspo_cli.env.raystart import plan

    host = host_factory(stack=STACK_023)
    facts = collect_facts(host, with_python=False)
    p = plan(clean_preset(), role="worker", facts=facts, host=host, head_address="10.0.0.1:6379", stack="0.23.0")
    argv = p["argv"]
    assert argv[1:4] == ["start", "--block", "--disable-usage-stats"]
    assert "--address=10.0.0.1:6379" in argv and '--resources={"NPU": 16}' in argv and "--head" not in argv
    assert p["env"]["RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"] == "1"
    assert p["env"]["HCCL_SOCKET_IFNAME"] == "enp189s0f0"  # from the route to the head
    assert p["env"]["LD_PRELOAD"] == "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"
    import pytest

    from gspo_cli.errors import ClusterError

    empty = host_factory(board=None, cann=None)
    with pytest.raises(ClusterError):
        plan(clean_preset(), role="head", facts=collect_facts(empty, with_python=False), host=empty)


def test_cluster_up_with_unwritable_gspo_home_is_a_clean_error(tmp_path, monkeypatch):
    import pytest

    from gspo_cli.env import raystart
    from gspo_cli.errors import ClusterError

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GSPO_HOME", str(blocker / "home"))  # under a file: nothing can be created
    with pytest.raises(ClusterError, match="cannot write gspo's Ray node record"):
        raystart.start({"argv": ["true"], "env": {}, "role": "head", "address": "x:1", "node_ip": None, "npus": 0})


def test_low_open_files_limit_fails_with_the_fix(host_factory):
    host = host_factory(stack=STACK_023, nofile=("1024", "4096"))
    _, checks, status = run(host, clean_preset())
    row = next(c for c in checks if c.name == "node.nofile")
    assert status["node.nofile"] == "error" and exit_code(checks) == 1
    assert row.message.startswith("ulimit -n 1024 (hard 4096): below the preset's 32768")
    assert "hard limit 4096 is below 32768" in row.message and "limits.conf" in row.fix
    host = host_factory(stack=STACK_023, nofile=("unlimited", "unlimited"))
    assert run(host, clean_preset())[2]["node.nofile"] == "ok"


def test_node_memory_against_the_presets_host_memory(host_factory):
    """Preflight judges host memory by cluster.host_memory_gib; doctor checks that this node has that much."""
    host = host_factory(stack=STACK_023, mem_total_kb=1_056_964_608)  # 1,008 GiB
    row = {c.name: c for c in run(host, clean_preset())[1]}["node.memory"]
    assert row.status == "error" and "1008 GiB RAM, but the preset says 1536 GiB" in row.message
    assert row.fix == "set cluster.host_memory_gib: 1008 and rerun gspo train --dry-run"
    unset = {c.name: c for c in run(host, clean_preset(**{"cluster.host_memory_gib": "null"}))[1]}["node.memory"]
    assert unset.status == "warn" and unset.fix.startswith("set cluster.host_memory_gib: 1008")
    gone = host_factory(stack=STACK_023, mem_total_kb=None)
    assert {c.name: c.status for c in run(gone, clean_preset())[1]}["node.memory"] == "skip"


def test_a_laptop_preset_is_not_asked_for_host_memory(host_factory):
    """Issue 44: `gspo env doctor --preset tiny-verl` asked for cluster.host_memory_gib: a one-node CPU preset runs
    on this machine, whose RAM the doctor reads. An accelerator preset without it is still asked (control above)."""
    host = host_factory(stack=STACK_023, mem_total_kb=16 * 1024 * 1024)
    for name in ("tiny-verl", "tiny"):
        row = {c.name: c for c in run(host, load_preset(name, []))[1]}["node.memory"]
        assert row.status == "ok" and "16 GiB RAM" in row.message and not row.fix, (name, row)
    two = {c.name: c for c in run(host, load_preset("tiny-verl", ["cluster.nnodes=2"]))[1]}["node.memory"]
    assert two.status == "warn"  # two CPU nodes: this one's RAM is not every node's


def test_known_bad_vllm_ascend_011_with_vllms_torch(host_factory):
    """vllm-ascend#5710: `pip install vllm==0.11.0` after vllm-ascend leaves torch 2.8.0 next to torch_npu 2.7.1."""
    host = host_factory(cann="8.3.RC2", stack={**STACK_011, "torch": "2.8.0"})
    _, checks, status = run(host, clean_preset())
    (bad,) = [c for c in checks if c.name == "stack.known_bad"]
    assert bad.status == "error" and "[stack-known-bad]" in bad.message and "vllm-ascend/issues/5710" in bad.message
    assert "vllm==0.11.0 first, then vllm-ascend" in bad.fix


def test_known_bad_numpy_1_and_practice_doc_transformers_with_verl_091(host_factory):
    host = host_factory(stack={**STACK_023, "verl": "0.9.1", "numpy": "1.26.4", "transformers": "5.3.0",
                               "ray": "2.55.1"})
    _, checks, _ = run(host, clean_preset())
    found = [c.message for c in checks if c.name == "stack.known_bad"]
    assert any(m.startswith("numpy 1.x with verl 0.9.1") for m in found)
    assert any(m.startswith("verl's GSPO practice-doc pins") for m in found)


def test_a3_dies_counted_as_cards(host_factory):
    """A3: npu-smi's 16 Chip rows are 8 cards x 2 dies; a preset that says 8 per node counts cards."""
    host = host_factory(stack=STACK_023)
    _, checks, status = run(host, clean_preset(**{"cluster.devices_per_node": 8, "rollout.tensor_parallel_size": 8}))
    (count,) = [c for c in checks if c.name == "npu.count"]
    assert count.status == "error" and "16 devices (8 cards x 2 dies)" in count.message
    assert "[a3-dies-vs-cards]" in count.message and "cluster.devices_per_node=16" in count.fix


def test_nz_weight_format_a_job_would_see_is_refused(host_factory):
    """VLLM_ASCEND_ENABLE_NZ=1 in the node's shell: vllm-ascend 0.23's wake_up raises and verl 0.9.1 only sets 0 when
    the variable is unset; the preset's "0" (qwen3-30b-a3b's) overrides the shell, and so does an unset variable."""
    moe = load_preset("qwen3-30b-a3b", ["cluster.host_memory_gib=1536"])
    host = host_factory(stack=STACK_023, env={"VLLM_ASCEND_ENABLE_NZ": "1"})
    _, checks, status = run(host, clean_preset())
    assert status["env.nz_weight_format"] == "error"
    assert "[ascend-nz-wake-up]" in next(c.message for c in checks if c.name == "env.nz_weight_format")
    assert "env.nz_weight_format" not in run(host, moe)[2]  # the preset's env.vars say "0"
    assert "env.nz_weight_format" not in run(host_factory(stack=STACK_023), clean_preset())[2]

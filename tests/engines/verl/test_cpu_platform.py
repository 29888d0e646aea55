"""verl on CPU, main tier (no vLLM needed): what the CPU switches and the CPU platform plugin change, that NPU and
GPU presets get none of it, and the test-only weight-sync control. The engine tier (tests/engine) runs the same
pieces inside verl's real trainer."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import types

import pytest

from gspo_cli.config import presets
from gspo_cli.config.presets import builtin_sources
from gspo_cli.engines.verl.compile import FP32_MIXED_PRECISION, compile_preset
from gspo_cli.engines.verl.cpu import platform as cpu_platform
from gspo_cli.engines.verl.cpu import switches as cpu_switches
from gspo_cli.errors import ConfigError

PATHS = dict(run_dir="/runs/r", train_file="/d/t.parquet", val_file="/d/v.parquet")
CPU_ENV = {"VERL_PLATFORM", "VERL_USE_EXTERNAL_MODULES", "VERL_ENGINE_DEVICE", "GSPO_VLLM_CPU_RELOADABLE_WEIGHTS",
           "VLLM_CPU_KVCACHE_SPACE", "VLLM_CPU_OMP_THREADS_BIND", cpu_switches.REPLAY_POLL_ENV,
           cpu_switches.SAMPLE_SEEDS_ENV, cpu_switches.BATCH_ORDER_ENV}


def _verl_presets() -> list[str]:
    return [s.name for s in builtin_sources() if (s.data.get("trainer") or {}).get("engine", "verl") == "verl"]


def test_accelerator_presets_compile_with_no_cpu_switch():
    """Every shipped verl preset for an NPU or GPU (or `auto`) compiles with none of the CPU switches: no
    VERL_PLATFORM, no plugin module, no CPU-only override, no fp32 FSDP compute for a bf16 model."""
    names = [n for n in _verl_presets() if presets.load(n).preset.cluster.device != "cpu"]
    assert len(names) >= 5, names
    for name in names:
        c = compile_preset(presets.load(name).preset, **PATHS)
        assert not CPU_ENV & set(c.env_vars), (name, sorted(CPU_ENV & set(c.env_vars)))
        assert not [k for k, o in c.origins.items() if o.startswith("cpu switch")], name
        assert not any(cpu_switches.PLUGIN_MODULE in o or "checkpoint_engine.backend=cpu_store" in o
                       for o in c.overrides), name
        assert not any("mixed_precision" in o for o in c.overrides), name


def test_tiny_verl_gets_every_cpu_switch_and_fp32_compute():
    preset = presets.load("tiny-verl").preset
    c = compile_preset(preset, **PATHS)
    switched = {o.split(": ", 1)[1] for o in c.origins.values() if o.startswith("cpu switch")}
    with_overrides = {s.name for s in cpu_switches.SWITCHES if s.overrides}
    assert with_overrides <= switched
    assert c.env_vars["VERL_PLATFORM"] == "cpu" and c.env_vars["VERL_USE_EXTERNAL_MODULES"] == cpu_switches.PLUGIN_MODULE
    fp32 = [o for o in c.overrides if ".actor.fsdp_config.mixed_precision=" in o]
    assert fp32 == ["+actor_rollout_ref.actor.fsdp_config.mixed_precision={param_dtype:fp32,reduce_dtype:fp32,"
                    "buffer_dtype:fp32}"], fp32
    assert c.origins["actor_rollout_ref.actor.fsdp_config.mixed_precision"] == "model.dtype"


@pytest.mark.slow
def test_fp32_compute_reaches_verls_resolved_config():
    """verl's own config composition (Hydra + its dataclasses) takes the fp32 mixed precision: the engine reads
    it as param_dtype fp32, so it computes without autocast (transformer_impl.py forward_step)."""
    from gspo_cli.engines.verl import schema_check

    c = compile_preset(presets.load("tiny-verl").preset, **PATHS)
    cfg = schema_check.compose(c.overrides)
    assert dict(cfg.actor_rollout_ref.actor.fsdp_config.mixed_precision) == FP32_MIXED_PRECISION
    bf16 = compile_preset(presets.load("tiny-verl", ["model.dtype=bfloat16"]).preset, **PATHS)
    assert schema_check.compose(bf16.overrides).actor_rollout_ref.actor.fsdp_config.get("mixed_precision") is None


def test_plugin_changes_nothing_without_verl_platform_cpu(monkeypatch):
    """Imported in a process without VERL_PLATFORM=cpu (as in every NPU job: verl imports external modules only
    when told), the plugin registers its class and patches nothing."""
    import verl.utils.distributed as dist

    assert not getattr(dist.initialize_global_process_group_ray, "_gspo_cpu", False)
    assert not any(isinstance(f, cpu_platform._AfterImport) for f in sys.meta_path)
    assert cpu_platform.PlatformCPU().ray_resource_name() == "GPU"
    assert cpu_platform.PlatformCPU().communication_backend_name() == "gloo"


def test_after_import_patches_a_module_when_it_is_first_imported(tmp_path, monkeypatch):
    (tmp_path / "gspo_probe_mod.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    cpu_platform.after_import("gspo_probe_mod", lambda m: seen.append(m.VALUE))
    assert not seen  # nothing imported it yet
    import gspo_probe_mod  # noqa: F401

    assert seen == [1]
    assert not any(isinstance(f, cpu_platform._AfterImport) for f in sys.meta_path)  # a one-shot hook
    cpu_platform.after_import("gspo_probe_mod", lambda m: seen.append(m.VALUE + 1))  # already imported: at once
    assert seen == [1, 2]
    sys.modules.pop("gspo_probe_mod", None)


def test_freeze_control_keeps_the_first_sync_and_skips_the_rest(capsys):
    """GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS: the first weight sync (vLLM starts from dummy weights) goes through,
    every later one is skipped and said on stderr."""
    calls = []

    class ServerAdapter:
        async def update_weights(self, weights, global_steps=None, **kwargs):
            calls.append((list(weights), global_steps))

    module = types.ModuleType("fake_rollout")
    module.ServerAdapter = ServerAdapter
    cpu_platform._skip_syncs_after_the_first(module)
    adapter = ServerAdapter()
    asyncio.run(adapter.update_weights(iter([("w", 0)]), global_steps=0))
    asyncio.run(adapter.update_weights(iter([("w", 1)]), global_steps=1))
    asyncio.run(adapter.update_weights(iter([("w", 2)]), global_steps=2))
    assert calls == [([("w", 0)], 0)]
    assert capsys.readouterr().err.count("weight sync skipped (test control)") == 2


@pytest.mark.parametrize("sets", [["env.vars.GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS=yes-please"],
                                  ["env.vars.gspo_test_anything=x"]])
def test_no_preset_can_set_a_test_switch(sets):
    with pytest.raises(ConfigError) as err:
        presets.load("tiny-verl", sets)
    assert "test-only switches" in str(err.value)


def test_test_switches_travel_with_the_job_and_say_so(monkeypatch, capsys):
    from gspo_cli.jobs.client import job_env

    monkeypatch.delenv("GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS", raising=False)
    assert "GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS" not in job_env({})
    assert "test switch" not in capsys.readouterr().err
    monkeypatch.setenv("GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS", "1")
    assert job_env({})["GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS"] == "1"
    assert "GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS=1 travels with the job" in capsys.readouterr().err


# replay_buffer_fast_poll. verl's sync trainer waits for each step's rollouts by polling TransferQueue and sleeping
# ReplayBuffer.poll_interval between polls (2.0 s, verl/trainer/ppo/v1/replay_buffer.py:144, slept at :409), so on
# CPU timing_s/gen was always a multiple of 2 s. These build verl's real ReplayBuffer with the arguments verl's
# trainer passes (trainer_base.py `_build_replay_buffer`: no poll_interval) and read what reaches `time.sleep`.

def _trainer_kwargs(mode: str = "sync") -> dict:
    from omegaconf import DictConfig

    return dict(trainer_mode=mode, trainer_config=DictConfig({}), max_off_policy_threshold=None,
                max_off_policy_strategy="drop", sampler_kwargs=DictConfig({}), refill_fn=lambda n: None,
                filter_groups_metric=None, sync_refill_failed_groups=False)


def _slept(rb, buffer, monkeypatch) -> list[float]:
    """The seconds `_wait_for_next_poll` (the nap between two TransferQueue polls in `sample`) sleeps."""
    naps: list[float] = []
    monkeypatch.setattr(rb, "time", types.SimpleNamespace(sleep=naps.append, time=time.time))
    buffer._wait_for_next_poll("train", time.time())
    return naps


def test_tiny_verl_polls_the_replay_buffer_sooner():
    c = compile_preset(presets.load("tiny-verl").preset, **PATHS)
    assert c.env_vars[cpu_switches.REPLAY_POLL_ENV] == cpu_switches.REPLAY_POLL_S == "0.1"
    assert any(n.startswith("cpu switch replay_buffer_fast_poll: ") for n in c.notes)


def test_replay_buffer_patch_sets_the_default_poll_and_keeps_an_explicit_one(monkeypatch):
    from omegaconf import DictConfig
    from verl.trainer.ppo.v1 import replay_buffer as rb

    monkeypatch.setattr(rb.ReplayBuffer, "__init__", rb.ReplayBuffer.__init__)  # put verl's back afterwards
    # Control: verl as shipped sleeps 2 s between polls.
    assert _slept(rb, rb.ReplayBuffer(**_trainer_kwargs()), monkeypatch) == [2.0]

    patch = cpu_platform._default_poll_interval(0.1)
    patch(rb)
    patch(rb)  # idempotent: wraps once
    assert getattr(rb.ReplayBuffer.__init__, "_gspo_cpu", False)
    assert getattr(rb.ReplayBuffer.__init__, "__wrapped__", None) is not None
    assert not getattr(rb.ReplayBuffer.__init__.__wrapped__, "_gspo_cpu", False)
    assert _slept(rb, rb.ReplayBuffer(**_trainer_kwargs()), monkeypatch) == [0.1]
    assert rb.ReplayBufferAsync(**_trainer_kwargs("separate_async")).poll_interval == 0.1  # inherits __init__
    # A caller's own interval wins, by keyword or by position (the 6th parameter).
    assert rb.ReplayBuffer(**_trainer_kwargs(), poll_interval=3.0).poll_interval == 3.0
    positional = rb.ReplayBuffer("sync", DictConfig({}), None, "drop", DictConfig({}), 3.0, lambda n: None)
    assert positional.poll_interval == 3.0


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "inf", "nan"])
def test_a_bad_poll_interval_keeps_verls_with_one_line(raw, monkeypatch, capsys):
    monkeypatch.setenv(cpu_switches.REPLAY_POLL_ENV, raw)
    assert cpu_platform._replay_poll_seconds() is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and cpu_switches.REPLAY_POLL_ENV in err and "keeps its 2 s poll" in err


def test_the_poll_interval_is_read_from_the_environment(monkeypatch, capsys):
    monkeypatch.delenv(cpu_switches.REPLAY_POLL_ENV, raising=False)
    assert cpu_platform._replay_poll_seconds() is None
    monkeypatch.setenv(cpu_switches.REPLAY_POLL_ENV, "0.25")
    assert cpu_platform._replay_poll_seconds() == 0.25
    assert capsys.readouterr().err == ""


_POLL_PROBE = f"""
import {cpu_switches.PLUGIN_MODULE}
from omegaconf import DictConfig
from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer
print("poll", ReplayBuffer(trainer_mode="sync", trainer_config=DictConfig({{}}), max_off_policy_threshold=None,
      max_off_policy_strategy="drop", sampler_kwargs=DictConfig({{}})).poll_interval)
"""


@pytest.mark.slow
def test_the_plugin_sets_the_poll_only_on_verl_cpu():
    """As verl loads it (VERL_USE_EXTERNAL_MODULES, before its trainer imports the replay buffer), in two fresh
    processes: the switch's variable takes effect with VERL_PLATFORM=cpu and not without."""
    base = {k: v for k, v in os.environ.items() if k not in ("VERL_PLATFORM", cpu_switches.REPLAY_POLL_ENV)}
    base[cpu_switches.REPLAY_POLL_ENV] = cpu_switches.REPLAY_POLL_S
    procs = {platform: subprocess.Popen([sys.executable, "-c", _POLL_PROBE], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True,
                                        env=dict(base, **({"VERL_PLATFORM": platform} if platform else {})))
             for platform in ("cpu", "")}
    out = {platform: proc.communicate(timeout=600)[0] for platform, proc in procs.items()}
    assert f"poll {float(cpu_switches.REPLAY_POLL_S)}\n" in out["cpu"], out["cpu"][-2000:]
    assert "poll 2.0\n" in out[""], out[""][-2000:]

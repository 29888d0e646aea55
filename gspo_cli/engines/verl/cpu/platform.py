"""verl CPU platform plugin: verl 0.9.1's FSDP2 trainer and vLLM-CPU rollout on a machine with no accelerator.

Loaded inside every verl process through `VERL_USE_EXTERNAL_MODULES=gspo_cli.engines.verl.cpu.platform` (verl
imports it at `import verl`, verl/__init__.py) and selected with `VERL_PLATFORM=cpu`
(verl/plugin/platform/platform_manager.py `_detect_platform_name`). gspo's compiler sets both only when the
preset says `cluster.device: cpu` on `trainer.engine: verl` (engines/verl/cpu/switches.py); importing this module
without `VERL_PLATFORM=cpu` registers the platform and changes nothing else.

CPU runs prove integration and semantics (config, data flow, loss, checkpoints, restarts), not NPU speed.

Each method is commented with the verl 0.9.1 call it serves. Three things are not reachable through verl's platform
API and are patched, only when VERL_PLATFORM=cpu (see docs/architecture.md, "verl on CPU"):
- verl/utils/distributed.py `initialize_global_process_group_ray` builds the backend string
  f"cpu:gloo,{device}:{backend}", which torch rejects for device "cpu" (duplicate device type): the wrapper
  passes backend="gloo".
- vLLM-CPU packs linear weights into oneDNN handles after loading and replaces `layer.weight` by an empty
  Parameter without `weight_loader` (vllm/model_executor/layers/utils.py `dispatch_cpu_unquantized_gemm`, called
  from linear.py `UnquantizedLinearMethod.process_weights_after_loading`), so verl's per-step weight sync
  (verl/workers/rollout/vllm_rollout/utils.py `_update_weights` -> `model.load_weights`) finds nothing to load
  into. With `GSPO_VLLM_CPU_RELOADABLE_WEIGHTS=1` (the compiled switch `vllm_cpu_reloadable_weights`) the vLLM
  worker process uses vLLM's own torch.nn.functional.linear fallback (`ops._supports_onednn = False`), which
  keeps the loaded weights in place.
- verl's sync trainer waits for each step's rollouts in `ReplayBuffer.sample`, which polls TransferQueue and then
  sleeps `poll_interval` (verl/trainer/ppo/v1/replay_buffer.py:409 `time.sleep(self.poll_interval)`), a
  constructor argument defaulting to 2.0 s (replay_buffer.py:144) that verl's trainer never passes
  (verl/trainer/ppo/v1/trainer_base.py:155-184 `_build_replay_buffer`): no config key or environment variable sets
  it. Every step's wait was rounded up to the next poll, so `timing_s/gen` was always 2.0x, 4.0x or 6.0x s. With
  `GSPO_VERL_REPLAY_POLL_S` (the compiled switch `replay_buffer_fast_poll`) the buffer's default becomes that many
  seconds; a poll_interval passed explicitly (a custom sampler) is kept.

One test-only control, `GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS=1` (read from the process environment; a preset cannot
set it: config/schema.py refuses GSPO_TEST_* in env.vars): every weight sync after the first in a trainer process
is skipped, so vLLM keeps generating with the starting weights while FSDP trains. The engine tests use it to show
that their weight-sync check (rollout vs actor log-probs) fails when the sync does not happen. A second,
`GSPO_TEST_RECORD_UPDATE=DIR` (record.py, same gating), writes verl's first actor update to DIR.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import Any

import torch
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

from gspo_cli.engines.verl.cpu.head import SLOT_RESOURCE, SLOT_VISIBLE_VAR
from gspo_cli.engines.verl.cpu.switches import REPLAY_POLL_ENV

PLATFORM = "cpu"
RELOADABLE_ENV = "GSPO_VLLM_CPU_RELOADABLE_WEIGHTS"
FREEZE_ROLLOUT_ENV = "GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS"
ROLLOUT_MODULE = "verl.workers.rollout.vllm_rollout.vllm_rollout"
REPLAY_BUFFER_MODULE = "verl.trainer.ppo.v1.replay_buffer"


def _mem_info() -> tuple[int, int]:
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page


def _rss() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _noop(*_args: Any, **_kwargs: Any) -> None:
    return None


def _device_module() -> types.ModuleType:
    """torch.cpu plus what verl calls on `get_torch_device()` and torch.cpu lacks; the rest falls through."""
    # Any: the shims below are attributes a bare module does not declare (verl calls them on the device module)
    mod: Any = types.ModuleType("gspo_cpu_device")
    mod.__getattr__ = lambda name: getattr(torch.cpu, name)
    mod.is_available = lambda: True  # verl/utils/device.py is_device_available
    mod.current_device = lambda: "cpu"  # tensor.to(get_device_id()), verl/protocol.py and engine code
    mod.set_device = _noop  # verl/utils/distributed.py initialize_global_process_group*
    mod.empty_cache = _noop  # verl/utils/memory_utils.py aggressive_empty_cache, rollout/sharding code
    mod.ipc_collect = _noop  # verl/workers/rollout/vllm_rollout/bucketed_weight_transfer.py _cleanup
    mod.set_per_process_memory_fraction = _noop  # verl/workers/engine/fsdp utils (GPU memory caps)
    mod.mem_get_info = _mem_info  # verl/utils/memory_utils.py get_memory_info / rollout memory checks
    mod.memory_allocated = _rss  # verl/utils/profiler/performance.py _get_current_mem_info
    mod.memory_reserved = _rss  # same
    mod.max_memory_allocated = _rss  # same
    mod.max_memory_reserved = _rss  # same
    mod.get_rng_state = torch.get_rng_state  # verl/workers/fsdp_workers.py / engine rng save in checkpoints
    mod.set_rng_state = torch.set_rng_state  # checkpoint load
    mod.manual_seed = torch.manual_seed
    mod.manual_seed_all = torch.manual_seed
    mod.get_device_name = lambda *_a: "cpu"  # verl/utils/device.py logging of the device name
    return mod


@PlatformRegistry.register(platform=PLATFORM)
class PlatformCPU(PlatformBase):
    """One host CPU as verl's 'device'. Ray places workers on the slots the head offers (head.py: `--num-gpus`)."""

    _module = _device_module()

    @property
    def device_name(self) -> str:  # verl/utils/device.py get_device_name: tensors go to "cpu"
        return "cpu"

    @property
    def vendor_name(self) -> str:  # verl/workers/engine/base.py EngineRegistry.get_engine_cls (vendor key)
        return "cpu"

    @property
    def device_module(self) -> types.ModuleType:  # verl/utils/device.py get_torch_device
        return self._module

    def is_available(self) -> bool:  # platform_manager._create_platform
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:  # auto-detection: never auto-picked
        return False

    def current_device(self) -> Any:  # verl/utils/device.py get_device_id: tensor.to("cpu")
        return "cpu"

    def device_count(self) -> int:  # verl/utils/device.py get_device_count
        return 1

    def set_device(self, device_index: int) -> None:  # verl/single_controller/base/worker.py _setup_env
        return None

    def synchronize(self, device_index: int | None = None) -> None:  # bucketed_weight_transfer.py send/receive
        return None

    def manual_seed(self, seed: int) -> None:  # verl/utils/torch_functional / engine seeding
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:  # verl/utils/device.py set_expandable_segments
        return None

    def empty_cache(self) -> None:  # verl/utils/device.py empty_cache callers
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return (None, None)  # verl/utils/device.py get_device_capability (flash-attn gates): none on CPU

    def communication_backend_name(self) -> str:  # verl/utils/device.py get_nccl_backend
        return "gloo"

    def visible_devices_envvar(self) -> str:  # verl/single_controller/base/worker.py: Ray sets it per slot
        return SLOT_VISIBLE_VAR

    def nvtx_range(self, msg: str):  # verl/utils/profiler: no NVTX on CPU
        import contextlib

        return contextlib.nullcontext()

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        # verl/single_controller/ray/base.py get_placement_groups bundles {device: 1} and _check_resource_available
        # counts only "GPU"/"NPU", and get_accelerator_ids() knows only Ray's accelerator names: a CPU "device" is
        # a logical Ray GPU slot (`ray start --num-gpus=N`, head.py); CPU torch ignores the CUDA_VISIBLE_DEVICES
        # Ray sets.
        return SLOT_RESOURCE

    def ray_noset_envvars(self) -> list[str]:  # vllm_async_server.py launch env
        return []

    def is_ipc_supported(self) -> bool:  # verl/workers/rollout/vllm_rollout/vllm_rollout.py: use_shm = True
        return False

    def rollout_env_vars(self) -> dict[str, str]:  # vllm_async_server.py env of the vLLM server
        keys = ("VLLM_CPU_KVCACHE_SPACE", "VLLM_CPU_OMP_THREADS_BIND", RELOADABLE_ENV)
        return {key: os.environ[key] for key in keys if key in os.environ}

    def cudart(self) -> Any:  # verl/utils/profiler: no CUDA runtime
        return None


def _patch_gloo_backend() -> None:
    """verl/utils/distributed.py:89 builds "cpu:gloo,cpu:gloo" for device cpu (torch: duplicate device type)."""
    import verl.utils.distributed as dist

    original = dist.initialize_global_process_group_ray
    if getattr(original, "_gspo_cpu", False):
        return

    def initialize_global_process_group_ray(timeout_second=None, backend=None):
        return original(timeout_second=timeout_second, backend=backend or "gloo")

    initialize_global_process_group_ray._gspo_cpu = True  # type: ignore[attr-defined]
    dist.initialize_global_process_group_ray = initialize_global_process_group_ray


def _keep_vllm_weights_reloadable() -> None:
    """In a vLLM worker (vllm already imported): use vLLM's F.linear fallback, which keeps layer.weight loaded."""
    if os.environ.get(RELOADABLE_ENV) != "1" or "vllm" not in sys.modules:
        return
    from vllm import _custom_ops as ops

    ops._supports_onednn = False


CPU_FUSED_MOE_MODULE = "vllm.model_executor.layers.fused_moe.cpu_fused_moe"


def _fp32_moe_off_amx(module: types.ModuleType) -> None:
    """vLLM-CPU 0.27.1 raises on an AMX CPU for any fused-MoE layer that is not bf16 with every dimension a multiple
    of 32 (cpu_fused_moe.py `check_grouped_gemm`: "refuses to silently fall back to the much slower per-expert torch
    loop"), so the float32 tiny MoE cannot start on such a host while it runs on any other x86 CPU. Where vLLM would
    raise, take the fallback it takes on those CPUs ((False, "none"): its own per-expert loop), and say so once."""
    cls = module.CPUFusedMOE
    original = cls.check_grouped_gemm
    if getattr(original, "_gspo_cpu", False):
        return

    @functools.wraps(original)
    def check_grouped_gemm(self: Any, layer: Any) -> tuple[bool, str]:
        try:
            return original(self, layer)
        except RuntimeError as err:
            if "grouped-gemm" not in str(err):
                raise
            print(f"gspo: vLLM-CPU's AMX MoE kernel cannot take w13 {tuple(layer.w13_weight.shape)} "
                  f"({layer.w13_weight.dtype}): its per-expert loop instead (as on CPUs without AMX)",
                  file=sys.stderr, flush=True)
            return False, "none"

    check_grouped_gemm._gspo_cpu = True  # type: ignore[attr-defined]
    cls.check_grouped_gemm = check_grouped_gemm


def keep_fp32_moe_off_amx() -> None:
    """Install `_fp32_moe_off_amx` in this process (now, or when vLLM's CPU MoE module is first imported)."""
    after_import(CPU_FUSED_MOE_MODULE, _fp32_moe_off_amx)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `patch(module)` right after `name` is first imported (this plugin is imported by `import verl`, before
    verl's worker modules exist)."""

    def __init__(self, name: str, patch: Callable[[types.ModuleType], None]) -> None:
        self.name, self.patch = name, patch

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # once; and the real finders answer the lookup below
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader: Any = spec.loader
        exec_module = loader.exec_module

        def exec_then_patch(module: types.ModuleType) -> None:
            exec_module(module)
            self.patch(module)

        loader.exec_module = exec_then_patch
        return spec


def after_import(name: str, patch: Callable[[types.ModuleType], None]) -> None:
    if name in sys.modules:
        patch(sys.modules[name])
    else:
        sys.meta_path.insert(0, _AfterImport(name, patch))


def _skip_syncs_after_the_first(module: types.ModuleType) -> None:
    """verl's colocated sync (engine_workers.py update_weights -> rollout.update_weights) loads the actor's weights
    into vLLM at start (vLLM starts from load_format dummy) and after every update: keep the first, skip the rest."""
    adapter = module.ServerAdapter
    original = adapter.update_weights

    async def update_weights(self: Any, weights: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "_gspo_synced_once", False):
            print(f"{FREEZE_ROLLOUT_ENV}=1: weight sync skipped (test control)", file=sys.stderr, flush=True)
            return None
        self._gspo_synced_once = True
        return await original(self, weights, *args, **kwargs)

    adapter.update_weights = update_weights


def _replay_poll_seconds() -> float | None:
    """GSPO_VERL_REPLAY_POLL_S as a positive number of seconds; None (verl's 2 s stays) when unset or not one."""
    raw = os.environ.get(REPLAY_POLL_ENV, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        print(f"{REPLAY_POLL_ENV}={raw!r} is not a positive number of seconds: verl's replay buffer keeps its "
              "2 s poll", file=sys.stderr, flush=True)
        return None
    return seconds


def _default_poll_interval(seconds: float) -> Callable[[types.ModuleType], None]:
    """verl/trainer/ppo/v1/replay_buffer.py:144 `poll_interval: float = 2.0` (slept at :409 between TransferQueue
    polls; trainer_base.py:155-184 never passes it): `seconds` instead, unless a caller passes one."""

    def patch(module: types.ModuleType) -> None:
        buffer = module.ReplayBuffer  # ReplayBufferAsync and custom samplers inherit or call this __init__
        original = buffer.__init__
        if getattr(original, "_gspo_cpu", False):
            return
        signature = inspect.signature(original)

        @functools.wraps(original)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if "poll_interval" not in signature.bind(self, *args, **kwargs).arguments:
                kwargs["poll_interval"] = seconds
            original(self, *args, **kwargs)

        __init__._gspo_cpu = True  # type: ignore[attr-defined]
        buffer.__init__ = __init__

    return patch


def _poll_replay_buffer_sooner() -> None:
    seconds = _replay_poll_seconds()
    if seconds is not None:
        after_import(REPLAY_BUFFER_MODULE, _default_poll_interval(seconds))


def _freeze_rollout_weights_for_tests() -> None:
    if os.environ.get(FREEZE_ROLLOUT_ENV) != "1":
        return
    print(f"{FREEZE_ROLLOUT_ENV}=1: test control active in pid {os.getpid()}: vLLM keeps its first weights",
          file=sys.stderr, flush=True)
    after_import(ROLLOUT_MODULE, _skip_syncs_after_the_first)


if os.environ.get("VERL_PLATFORM", "").strip().lower() == PLATFORM:
    _patch_gloo_backend()
    _keep_vllm_weights_reloadable()
    keep_fp32_moe_off_amx()
    _poll_replay_buffer_sooner()
    _freeze_rollout_weights_for_tests()
    from gspo_cli.engines.verl.cpu import batch_order, record, sample_seeds

    sample_seeds.install(after_import)  # GSPO_VLLM_SAMPLE_SEEDS: a vLLM seed per response
    batch_order.install(after_import)  # GSPO_VERL_BATCH_ORDER: each step's batch in draw order
    record.install(after_import)  # GSPO_TEST_RECORD_UPDATE: the same-batch equivalence test's recording

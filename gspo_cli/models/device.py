"""Pick the torch device of the native engine (and of eval's hf backend): npu > cuda > cpu when `auto`, or what
the preset asks for (the kinds are config/devices.py's)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from gspo_cli.config import devices
from gspo_cli.errors import ConfigError


def npu_available() -> bool:
    # torch_npu patches torch at import and fails where CANN is absent: only import it when it is installed, and
    # treat any failure as "no NPU".
    package = str(devices.get("npu").torch_package)
    if importlib.util.find_spec(package) is None:
        return False
    try:
        import torch

        importlib.import_module(package)
        return bool(torch.npu.is_available())
    except Exception:
        return False


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


# kind -> (is it usable here, what to say when it is not): in the order `auto` prefers them
_USABLE: dict[str, tuple[Callable[[], bool], str]] = {
    "npu": (npu_available, "torch_npu / an NPU is not available (torch-npu is installed only on Ascend hosts)"),
    "cuda": (_cuda_available, "no CUDA device is visible"),
    "cpu": (lambda: True, ""),
}


def detect_device(requested: str | None = "auto") -> str:
    """The device type: `requested` as given, or for auto (or nothing) npu > cuda > cpu, as detected."""
    if not devices.is_auto(requested):
        return str(requested)
    return next(name for name, (usable, _) in _USABLE.items() if usable())


def resolve_device(requested: str = "auto"):
    import torch

    kind = detect_device(requested)
    usable, why = _USABLE[devices.get(kind).name]
    if not devices.is_auto(requested) and not usable():
        raise ConfigError(f"trainer.device is {requested} but {why}", "use trainer.device=auto or cpu")
    return torch.device(f"{kind}:0" if devices.get(kind).accelerator else kind)

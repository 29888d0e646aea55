"""Pick the torch device of the native engine (and of eval's hf backend): the preset's kind, or for `auto` the first
kind of the "torch" rule (npu > cuda > cpu) that torch can use in this process. The kinds, the rule and what to say
when a kind is not usable are config/devices.py's; this module asks torch."""

from __future__ import annotations

import importlib
import importlib.util

from gspo_cli.config import devices
from gspo_cli.config.devices import Device
from gspo_cli.errors import ConfigError, first_line


def unusable_because(device: Device) -> str | None:
    """None when torch in this process can use the kind; else why not (the entry's words, and the cause when its
    torch package failed to load). A kind that needs a torch package (torch_npu) is only imported where that
    package is installed: it patches torch at import and fails where CANN is absent."""
    if not device.accelerator:
        return None
    package = device.torch_package
    if package and importlib.util.find_spec(package) is None:
        return device.unusable
    import torch

    if not package:
        return None if getattr(torch, device.name).is_available() else device.unusable
    try:
        importlib.import_module(package)
        return None if getattr(torch, device.name).is_available() else device.unusable
    except Exception as exc:  # any failure of the vendor's stack means "not usable here": said, with its cause
        return f"{device.unusable}; {package} failed to load: {first_line(exc)}"


def detect_device(requested: str | None = "auto") -> str:
    """The device type: `requested` as given, or for auto (or nothing) the "torch" rule's first usable kind."""
    if not devices.is_auto(requested):
        return str(requested)
    return next(d.name for d in devices.AUTO_RULES["torch"].kinds() if unusable_because(d) is None)


def resolve_device(requested: str = "auto"):
    import torch

    kind = devices.get(detect_device(requested))
    why = None if devices.is_auto(requested) else unusable_because(kind)
    if why is not None:
        raise ConfigError(f"trainer.device is {requested} but {why}", "use trainer.device=auto or cpu")
    return torch.device(f"{kind.name}:0" if kind.accelerator else kind.name)

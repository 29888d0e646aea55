"""Torch files from a run folder or a checkpoint, loaded without running their code.

`torch.save` writes a pickle; a plain `torch.load(weights_only=False)` of a file someone else wrote runs whatever
its `__reduce__` names (os.system, ...). gspo loads every torch file with `weights_only=True`: torch's restricted
unpickler, which builds only tensors, containers, numbers and the types allowlisted below, and refuses the rest.
`load` is that load with one clear error; `check` loads a file the same way without reading its tensor data
(mmap), for files that verl will unpickle itself (its resume path and model merger use `weights_only=False`).

Allowlisted besides torch's own defaults (torch.serialization): DTensor and its placements (verl's FSDP shards;
importing `torch.distributed.tensor` registers them) and numpy's array reconstruction (verl's RNG state holds
`np.random.get_state()`). Nothing here can call a function other than these constructors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gspo_cli.errors import ConfigError

HINT = ("gspo loads checkpoints with torch's weights-only loader and refuses files that hold other objects; "
        "use a checkpoint you or gspo wrote (docs/security.md)")


def _allowlist() -> list[Any]:
    import numpy as np

    core = getattr(np, "_core", None) or np.core  # numpy 2 moved np.core to np._core
    found: list[Any] = [core.multiarray._reconstruct, np.ndarray, np.dtype]
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:  # numpy >= 1.25 pickles a dtype by its class
        found += [getattr(dtypes, n) for n in ("UInt32DType", "Int64DType", "Float64DType") if hasattr(dtypes, n)]
    return found


def load(path: str | Path, *, map_location: Any = "cpu", mmap: bool = False) -> Any:
    """`torch.load(path, weights_only=True)` with gspo's allowlist; a file that holds anything else is a
    ConfigError naming it (nothing of it has run)."""
    import pickle

    import torch
    import torch.distributed.tensor  # noqa: F401 - registers DTensor with the weights-only unpickler

    try:
        with torch.serialization.safe_globals(_allowlist()):
            return torch.serialization.load(path, map_location=map_location, weights_only=True, mmap=mmap)
    except pickle.UnpicklingError as exc:
        reason = next((line.strip() for line in str(exc).splitlines()
                       if "GLOBAL" in line or "Unsupported" in line), "")
        raise ConfigError(f"{path} holds pickled objects, not just tensors: gspo does not load it"
                          + (f" ({reason[:200]})" if reason else ""), HINT) from None
    except (RuntimeError, ValueError, EOFError, OSError) as exc:
        raise ConfigError(f"cannot read {path}: {' '.join(str(exc).split())[:200]}",
                          "the file is damaged or not a torch file") from None


def check(paths: list[Path]) -> None:
    """Each file loads with `weights_only=True` (tensor data mapped, not read); ConfigError for the first that
    does not. For files another program (verl) then unpickles itself."""
    for path in paths:
        load(path, mmap=True)


def check_checkpoint(step_dir: str | Path) -> int:
    """Every torch file of a checkpoint step (verl: `actor/*.pt`, `data.pt`, ...) loads weights-only; returns how
    many were checked. verl's resume unpickles them with `weights_only=False` in its workers, so gspo checks them
    first: a run folder from someone else cannot run code through `gspo train --resume`."""
    files = sorted(p for p in Path(step_dir).rglob("*.pt") if p.is_file())
    check(files)
    return len(files)


@contextlib.contextmanager
def refusing_pickles(model_path: str | Path) -> Iterator[None]:
    """Around a `from_pretrained`: transformers loads `pytorch_model*.bin` weights-only and raises torch's
    UnpicklingError for a file holding other objects; that becomes one ConfigError line (nothing of it ran)."""
    import pickle

    try:
        yield
    except pickle.UnpicklingError as exc:
        reason = next((line.strip() for line in str(exc).splitlines() if "GLOBAL" in line), "")
        raise ConfigError(f"{model_path}: a weights file holds pickled objects, not just tensors: gspo does not load "
                          "it" + (f" ({reason[:200]})" if reason else ""), HINT) from None

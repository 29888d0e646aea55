"""verl's FSDP model merger with every shard loaded by torch's weights-only loader.

`python -m verl.model_merger merge --backend fsdp` loads `model_world_size_W_rank_R.pt` with
`torch.load(weights_only=False)` (verl/model_merger/fsdp_model_merger.py), so a checkpoint folder from someone
else would run its pickled code. This module is the merge process gspo runs instead
(`python -m gspo_cli.models.verl_merge --local_dir ACTOR --target_dir OUT`): it makes `torch.load` in this process
`gspo_cli.models.safe_load.load` (weights_only=True, DTensor allowlisted), then runs verl's own merger unchanged.
A shard that holds anything but tensors (or cannot be read) stops the merge before any of it runs: one `Error:`
line and its `Hint:`, exit 3.
"""

from __future__ import annotations

import sys

REFUSED_EXIT = 3  # a shard was refused (not a failure of the merge itself)


def _weights_only_load(f, map_location=None, weights_only=None, mmap=None, **_ignored):
    """torch.load as verl calls it, always through the weights-only loader."""
    from gspo_cli.models.safe_load import load

    return load(f, map_location=map_location if map_location is not None else "cpu", mmap=bool(mmap))


def main(argv: list[str] | None = None) -> int:
    import torch

    from gspo_cli.errors import ConfigError

    torch.load = _weights_only_load  # this process only: every load verl's merger makes is weights-only
    argv = list(sys.argv[1:] if argv is None else argv)
    sys.argv = ["verl.model_merger", "merge", "--backend", "fsdp", *argv]
    from verl.model_merger.__main__ import main as verl_main

    try:
        verl_main()
    except ConfigError as exc:
        print(f"Error: {exc.message}", file=sys.stderr, flush=True)
        if exc.hint:  # safe_load's own: a damaged file and a file holding code are told apart
            print(f"Hint: {exc.hint}", file=sys.stderr, flush=True)
        return REFUSED_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())

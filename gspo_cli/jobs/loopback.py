"""Ray's local-only mode, in which the embedded head runs: every one of its servers on 127.0.0.1.

`ray start --node-ip-address=127.0.0.1` alone is not enough: Ray turns a loopback node address into the host's
network address (ray/_private/services.py `resolve_ip_for_localhost`), and its GCS, raylet, object manager and
worker gRPC servers listen on every interface unless the node's address is 127.0.0.1. Ray keeps it loopback only
when its multi-node switch is off (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, read once into
`ray._private.ray_constants.ENABLE_RAY_CLUSTER`; on by default on Linux, off on macOS and Windows): then
`get_node_ip_address()` answers 127.0.0.1, and every server of the node binds 127.0.0.1 (`ss -ltnp`; measured in
docs/benchmarks.md "The embedded head: binds and stop time"). Such a head cannot take worker nodes, which the
embedded head never has.

A driver in another process (`--local`, `env doctor --cluster`) must run in the same mode to reach that head: in
the default mode it too turns 127.0.0.1 into the host's address and waits for a GCS nobody serves there.
`use_in_process(True)` switches this process into it, `use_in_process(False)` back to what the user had.
"""

from __future__ import annotations

import os
import sys

SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
LOCAL_ONLY = "0"

_UNSET = object()
_saved: object = _UNSET  # the user's value before this process switched, while switched


def server_env(env: dict[str, str]) -> dict[str, str]:
    """`env` for a `ray start` whose node serves on 127.0.0.1 only; a new dict."""
    return {**env, SWITCH: LOCAL_ONLY}


def use_in_process(local_only: bool) -> None:
    """Make this process's Ray drivers (ray.init) run in the local-only mode (`local_only`), or as the user had it."""
    global _saved
    if local_only:
        if _saved is _UNSET:
            _saved = os.environ.get(SWITCH)
        os.environ[SWITCH] = LOCAL_ONLY
    elif _saved is not _UNSET:
        if _saved is None:
            os.environ.pop(SWITCH, None)
        else:
            os.environ[SWITCH] = str(_saved)
        _saved = _UNSET
    else:
        return
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # Ray read the switch when it was imported: tell it again
        from ray._private.ray_constants import env_bool

        constants.ENABLE_RAY_CLUSTER = env_bool(SWITCH, not constants.IS_WINDOWS_OR_OSX)  # type: ignore[attr-defined]

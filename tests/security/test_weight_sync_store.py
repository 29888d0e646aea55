"""Finding 6 of issue #39: the verl CPU route's weight-sync store listens on loopback only.

On 85f9e67 `CpuStoreCheckpointEngine.prepare` opened `dist.TCPStore(<node ip>, 0, is_master=True)`, whose server
binds every interface (`[::]` in /proc/net/tcp6) whatever host it is given: a client on the machine's other
address (here 192.0.2.2) connected and read the bucket `b0` that carries the policy weights to vLLM (and could
overwrite it). Now the master binds 127.0.0.1 itself and hands the socket to TCPStore (`master_listen_fd`).
What proves the bind is the kernel's own table of listening sockets (/proc/net/tcp, tcp6): 127.0.0.2 would
reach a `0.0.0.0` listener too, so a connect from another loopback address proves nothing; a connect on a
non-loopback address of this machine is tried where one exists.
"""

from __future__ import annotations

import datetime
import socket
from pathlib import Path

import pytest
import verl.checkpoint_engine.base  # noqa: F401 - hard: the store is verl's; a missing verl fails, never skips

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

pytestmark = pytest.mark.security

LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's st column


def _listeners(port: int) -> list[str]:
    """The local addresses (hex, as the kernel writes them) of the sockets listening on `port`."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.is_file():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            addr, _, hexport = fields[1].rpartition(":")
            if int(hexport, 16) == port and fields[3] == LISTEN:
                found.append(addr)
    return found


def _other_addresses() -> list[str]:
    """This machine's IPv4 addresses that are not loopback (none on a host with loopback only)."""
    found = set()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.add(info[4][0])
    except OSError:
        pass
    try:  # the address of the default route's interface (no packet is sent by a UDP connect)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            found.add(s.getsockname()[0])
    except OSError:
        pass
    return sorted(a for a in found if not a.startswith("127."))


def _store_engine():
    from verl.checkpoint_engine.base import CheckpointEngineRegistry

    from gspo_cli.engines.verl.cpu.checkpoint_engine import BACKEND

    return CheckpointEngineRegistry.get(BACKEND)(bucket_size=1 << 16, is_master=True)


def test_the_weight_store_listens_on_loopback_only_and_refuses_another_address():
    master = _store_engine()
    info = master.prepare()
    try:
        master._store().set("b0", b"policy weights")
        port = info["port"]
        # the kernel's view: one listener on this port, bound to 127.0.0.1 (0100007F), not 0.0.0.0 or [::]
        assert _listeners(port) == ["0100007F"], _listeners(port)
        # control: the rollout side reads the bucket through the address it is handed
        reader = dist.TCPStore(info["host"], port, is_master=False, timeout=datetime.timedelta(seconds=10))
        assert reader.get("b0") == b"policy weights"
        for addr in _other_addresses():  # 192.0.2.2 here; on 85f9e67 this connect read b0
            with pytest.raises(OSError):
                socket.create_connection((addr, port), timeout=3).close()
    finally:
        master.finalize()


def test_the_check_sees_an_all_interfaces_store():
    """Control of the check above: torch's own TCPStore server, given a host, still listens on every interface
    (what 85f9e67 ran), and the listener check and the other-address connect both see it."""
    store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                          timeout=datetime.timedelta(seconds=10))
    store.set("b0", b"policy weights")
    listeners = _listeners(store.port)
    assert listeners and all(set(a) == {"0"} for a in listeners), listeners  # 0.0.0.0 / [::]
    for addr in _other_addresses():
        client = dist.TCPStore(addr, store.port, is_master=False, timeout=datetime.timedelta(seconds=10))
        assert client.get("b0") == b"policy weights"

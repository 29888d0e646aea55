"""A verl checkpoint engine for CPU hosts: the weight transfer verl's V1 `separate_async` mode needs, without NCCL.

separate_async trains on one share of the devices and generates on the other, and moves weights between them with
a collective checkpoint engine; it refuses verl's colocated `naive` one (verl/trainer/ppo/v1/
trainer_separate_async.py:67). verl 0.9.1's collective engines all need an accelerator transport: `nccl` imports
cupy and uses NCCL through ray.util.collective (verl/checkpoint_engine/nccl_checkpoint_engine.py:22-23, 298; on a CPU
host cupy is absent, so `nccl` is not even registered), `hccl` needs torch_npu, nixl/mooncake/kimi their own RDMA
libraries. This engine, registered as `cpu_store` through verl's plugin hook (`checkpoint_engine.
custom_backend_module`, imported by every worker before the backend is built: verl/checkpoint_engine/base.py
CheckpointEngineWorker and verl/workers/engine_workers.py), moves the same buckets through a torch TCPStore the
sending actor rank 0 serves: each bucket is one serialized list of (name, tensor), read by every rollout worker.
The rollout side then loads the weights through verl's own server adapter (`update_weights`), as with NCCL.
Selected by the `cpu_weight_transfer` switch (cpu/switches.py) for `cluster.device: cpu` + separate_async only.
It is for integration runs on CPU, not speed: a TCP key-value store, not a collective.
"""

from __future__ import annotations

import asyncio
import io
import socket
import time
from collections.abc import AsyncGenerator, Generator
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from verl.checkpoint_engine.base import CheckpointEngine, CheckpointEngineRegistry
from verl.workers.rollout.utils import ensure_async_iterator

BACKEND = "cpu_store"
TIMEOUT = timedelta(minutes=30)  # a loaded CPU host can take minutes between buckets
# The store carries the policy weights unauthenticated: it listens on loopback only. torch's TCPStore server binds
# every interface whatever host it is given, so the master binds the socket itself and hands TCPStore its fd
# (`master_listen_fd`). verl on a CPU is one host (engines/verl/cpu/head.py): every reader is local.
LOOPBACK = "127.0.0.1"


def loopback_listener() -> tuple[int, int]:
    """(fd, port) of a listening TCP socket on 127.0.0.1 and a free port; the fd is the TCPStore's (it closes it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((LOOPBACK, 0))
        sock.listen(128)
        port = sock.getsockname()[1]
    except OSError:
        sock.close()
        raise
    return sock.detach(), port


def _pack(items: list[tuple[str, torch.Tensor]], last: bool) -> bytes:
    buf = io.BytesIO()
    torch.save({"items": items, "last": last}, buf)
    return buf.getvalue()


def _unpack(data: bytes) -> tuple[list[tuple[str, torch.Tensor]], bool]:
    obj = torch.load(io.BytesIO(data), weights_only=True)
    return obj["items"], obj["last"]


@CheckpointEngineRegistry.register(BACKEND)
class CpuStoreCheckpointEngine(CheckpointEngine):
    """Actor rank 0 serves a TCPStore per sync and writes the weight buckets `b0, b1, ...` into it; every rollout
    worker reads them in order until the one marked last. Other actor ranks only walk their weight generator
    (producing each full tensor is collective over the FSDP group)."""

    def __init__(self, bucket_size: int, is_master: bool = False) -> None:
        self.bucket_size = bucket_size
        self.is_master = is_master
        self.store: dist.TCPStore | None = None
        self.rank = -1

    # verl's base declares dict[str, Any]; its callers collect every worker's value as metadata and our
    # build_topology reads only the master's (metadata[0], as verl's nccl engine does), so the others return None.
    def prepare(self) -> dict[str, Any] | None:  # type: ignore[override]
        """The master opens this sync's store (a free loopback port) and hands out its address."""
        if not self.is_master:
            return None
        fd, port = loopback_listener()
        self.store = dist.TCPStore(LOOPBACK, port, is_master=True, timeout=TIMEOUT, wait_for_workers=False,
                                   master_listen_fd=fd)
        return {"host": LOOPBACK, "port": port}

    @classmethod
    def build_topology(cls, actor_wg_world_size: int, rollout_world_size: int, metadata: list
                       ) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
        master = metadata[0]
        assert master is not None, "actor rank 0 must be the checkpoint engine master"
        actor = {"rank": [0] + [-1] * (actor_wg_world_size - 1), "master": [master] * actor_wg_world_size}
        rollout = {"rank": list(range(1, rollout_world_size + 1)), "master": [master] * rollout_world_size}
        return actor, rollout

    # verl declares **kwargs; it calls this with the keys build_topology returns (rank, master), as in its hccl engine
    def init_process_group(self, rank: int, master: dict) -> None:  # type: ignore[override]
        self.rank = rank
        if rank > 0:
            self.store = dist.TCPStore(master["host"], master["port"], is_master=False, timeout=TIMEOUT)

    def _store(self) -> dist.TCPStore:
        assert self.store is not None, "init_process_group (or prepare on the master) opens the store first"
        return self.store

    def finalize(self) -> None:
        self.store = None  # the master's store server stops with it; every reader has finished by now

    @torch.no_grad()
    async def send_weights(self, weights: Generator[tuple[str, torch.Tensor], None, None],
                           global_steps: int | None = None) -> dict[str, float]:
        if self.rank != 0:
            async for _ in ensure_async_iterator(weights):  # not the sender: only help gather each tensor
                pass
            return {}
        start, total = time.perf_counter(), 0
        bucket: list[tuple[str, torch.Tensor]] = []
        size, index = 0, 0
        store = self._store()
        async for name, tensor in ensure_async_iterator(weights):  # a plain or async generator (verl's engines)
            tensor = tensor.detach().to("cpu").contiguous()
            if bucket and size + tensor.nbytes > self.bucket_size:
                await asyncio.to_thread(store.set, f"b{index}", _pack(bucket, last=False))  # type: ignore[arg-type]
                bucket, size, index = [], 0, index + 1
            bucket.append((name, tensor.clone()))
            size += tensor.nbytes
            total += tensor.nbytes
        # TCPStore.set takes bytes as well as str (torch's stub names only str)
        await asyncio.to_thread(store.set, f"b{index}", _pack(bucket, last=True))  # type: ignore[arg-type]
        # verl's CheckpointEngineManager hands a sender's dict to the trainer, which logs it with the next step
        return {f"checkpoint_engine/{BACKEND}/megabytes": total / 2**20,
                f"checkpoint_engine/{BACKEND}/buckets": index + 1,
                f"checkpoint_engine/{BACKEND}/send_s": time.perf_counter() - start}

    # verl's base declares a coroutine returning a generator; its callers iterate with `async for`, and its own
    # engines (nccl, hccl) are async generators like this one
    @torch.no_grad()
    async def receive_weights(  # type: ignore[override]
            self, global_steps: int | None = None) -> AsyncGenerator[tuple[str, torch.Tensor]]:
        index, last = 0, False
        store = self._store()
        while not last:
            data = await asyncio.to_thread(store.get, f"b{index}")  # blocks until the master has set it
            items, last = _unpack(data)
            for name, tensor in items:
                yield name, tensor
            index += 1

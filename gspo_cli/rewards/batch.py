"""Score many responses in a process pool: order preserved, a per-item time limit, no item can sink the batch.

Each worker handles chunks of items and reports every item as it finishes. Inside a worker an interval timer
interrupts an item that overruns (Python code); the parent also watches each worker and kills one that has
been silent for longer than the limit (C code that ignores signals), records that item as a timeout and
hands the rest of its chunk to a fresh worker.

The pool buys isolation, not speed: scoring costs ~0.05 ms per 8k-token response, less than sending the
text to a worker, so `workers=0` (in-process) is faster and still bounded in practice (every slow path is
the math-verify fallback, which has its own hard-killed worker). See docs/benchmarks.md.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

GRACE_S = 2.0  # the parent's hard kill comes this long after the worker's own timer should have fired


def _item_args(item: Any) -> tuple[str, str, str, Any]:
    if isinstance(item, Mapping):
        return (
            item.get("data_source", ""),
            item.get("solution_str", item.get("response", "")),
            item.get("ground_truth", ""),
            item.get("extra_info"),
        )
    ds, sol, gt, *rest = item
    return ds, sol, gt, (rest[0] if rest else None)


def _failed(reason: str) -> dict:
    return {"score": -1.0, "acc": False, "pred": "", "error": reason}


def _load(spec: str):
    import importlib

    mod, _, fn = spec.partition(":")
    return getattr(importlib.import_module(mod), fn)


def _score_one(item: Any, scorer: str | None = None) -> dict:
    from gspo_cli.rewards.score import get_scorer

    ds, sol, gt, extra = _item_args(item)
    if scorer:
        res = dict(_load(scorer)(ds, sol, gt, extra))
    else:
        # get_scorer directly (not compute_score) so an internal error is reported, not silently scored -1.
        res = dict(get_scorer(str(ds or ""))(str(sol if sol is not None else ""), str(gt if gt is not None else "")))
    res["error"] = None
    return res


class _ItemTimeout(Exception):
    pass


def _worker_main(
    conn, timeout_s: float, scorer: str | None = None
) -> None:  # pragma: no cover - runs in worker processes
    import signal

    from gspo_cli.rewards import fallback

    fallback.set_in_process(True)

    def _alarm(signum, frame):
        raise _ItemTimeout()

    signal.signal(signal.SIGALRM, _alarm)
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        for idx, item in chunk:
            try:
                signal.setitimer(signal.ITIMER_REAL, timeout_s)
                try:
                    res = _score_one(item, scorer)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except _ItemTimeout:
                res = _failed(f"timeout after {timeout_s:g}s")
            except BaseException as e:  # noqa: BLE001
                res = _failed(f"{type(e).__name__}: {e}"[:300])
            conn.send((idx, res))
        conn.send(("done", None))


class _Worker:
    def __init__(self, timeout_s: float, scorer: str | None):
        from gspo_cli.rewards._proc import Child

        self.scorer = scorer
        self.child = Child("gspo_cli.rewards.batch:_worker_main", timeout_s, scorer)
        self.conn = self.child.conn
        self.pending: deque[int] = deque()  # indices sent and not yet answered, in order
        self.last = time.monotonic()
        self.active = False  # a chunk is out and its "done" not yet read

    def send(self, chunk: list[tuple[int, Any]]) -> None:
        self.pending.extend(i for i, _ in chunk)
        self.last = time.monotonic()
        self.active = True
        self.conn.send(chunk)

    def kill(self) -> None:
        self.child.kill()


def score_serial(items: Sequence[Any], scorer: str | None = None) -> list[dict]:
    """The same results, in this process, one after another (no time limit)."""
    out = []
    for item in items:
        try:
            out.append(_score_one(item, scorer))
        except Exception as e:  # noqa: BLE001
            out.append(_failed(f"{type(e).__name__}: {e}"[:300]))
    return out


def score_batch(
    items: Iterable[Any],
    *,
    timeout_s: float = 10.0,
    workers: int | None = None,
    chunk_size: int = 32,
    scorer: str | None = None,
) -> list[dict]:
    """Score items (mappings with data_source/solution_str/ground_truth, or tuples in that order).

    Returns one dict per item, in input order: score, acc, pred, and `error` (None, or why the item failed:
    a timeout, a crashed worker, an exception). A failed item scores -1 and the batch goes on.
    `workers=0` scores in this process without a time limit. `scorer` ("module:function", called as
    f(data_source, solution_str, ground_truth, extra_info) -> dict) replaces the data_source registry.
    """
    items = list(items)
    if not items:
        return []
    if workers is None:
        workers = min(len(items) // chunk_size + 1, os.cpu_count() or 1, 8)
    if workers <= 0:
        return score_serial(items, scorer)

    results: list[dict | None] = [None] * len(items)
    todo: deque[list[tuple[int, Any]]] = deque(
        [(i, items[i]) for i in range(s, min(s + chunk_size, len(items)))] for s in range(0, len(items), chunk_size)
    )
    pool = [_Worker(timeout_s, scorer) for _ in range(min(workers, len(todo)))]
    idle = list(pool)
    remaining = len(items)
    try:
        while remaining:
            while idle and todo:
                idle.pop().send(todo.popleft())
            remaining -= _collect(pool, idle, todo, items, results, timeout_s)
    finally:
        for w in pool:
            w.child.close()
    return [r if r is not None else _failed("not scored") for r in results]


def _collect(pool: list, idle: list, todo: deque, items: list, results: list, timeout_s: float) -> int:
    """One wait on the busy workers: store the results that arrived, return finished workers to `idle`, replace
    dead or stuck ones. Returns how many items got their result."""
    from multiprocessing.connection import wait

    busy = [w for w in pool if w.active]
    ready = wait([w.conn for w in busy], timeout=0.2)
    now = time.monotonic()
    done = 0
    for w in busy:
        if w.conn not in ready:
            if now - w.last > timeout_s + GRACE_S:
                reason = f"timeout after {timeout_s:g}s (worker killed)"
                done += _replace(w, pool, idle, todo, items, results, timeout_s, reason)
            continue
        try:
            idx, res = w.conn.recv()
        except (EOFError, OSError):
            reason = f"worker died (exit code {w.child.proc.poll()})"
            done += _replace(w, pool, idle, todo, items, results, timeout_s, reason)
            continue
        w.last = now
        if idx == "done":
            w.active = False
            idle.append(w)
            continue
        if results[idx] is None:
            results[idx] = res
            done += 1
        if w.pending and w.pending[0] == idx:
            w.pending.popleft()
    return done


def _replace(
    w: _Worker, pool: list, idle: list, todo: deque, items: list, results: list, timeout_s: float, reason: str
) -> int:
    """Kill a stuck or dead worker: its current item fails with `reason`, the rest of its chunk is requeued."""
    w.kill()
    pool.remove(w)
    done = 0
    if w.pending:
        cur = w.pending.popleft()
        if results[cur] is None:
            results[cur] = _failed(reason)
            done = 1
    rest = [i for i in w.pending if results[i] is None]
    if rest:
        todo.appendleft([(i, items[i]) for i in rest])
    nw = _Worker(timeout_s, w.scorer)
    pool.append(nw)
    idle.append(nw)
    return done

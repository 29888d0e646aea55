"""math-verify for answers the exact path cannot decide (symbolic ground truths, `x^2 - x^2`).

math-verify times out with `signal.alarm`, which only works on a main thread, and sympy can spin in C where
no signal reaches it. So by default every call goes to one persistent worker process (spawned, so it is safe
under Ray and threads) and a call that runs past its hard timeout kills that worker; the next call starts a
fresh one. Inside `score_batch` workers, which already have a hard-kill watchdog, it runs in-process.
"""

from __future__ import annotations

import sys
import threading

MAX_FALLBACK_CHARS = 300  # longer answers are not sent to sympy at all

_IN_PROCESS = False  # set by score_batch workers: run math-verify directly, the parent kills on overrun
_lock = threading.Lock()
_worker = None  # a gspo_cli.rewards._proc.Child


def set_in_process(flag: bool) -> None:
    global _IN_PROCESS
    _IN_PROCESS = flag


_said: set[str] = set()  # exception types already reported by this process


def no_match(exc: BaseException) -> bool:
    """math-verify raised while comparing: a non-match (as verl's math_verify scorer scores it), said on stderr the
    first time per exception type, so a broken math-verify install is not a silent run of wrong answers."""
    kind = type(exc).__name__
    if kind not in _said:
        _said.add(kind)
        print(f"gspo reward math-verify: {kind}: {' '.join(str(exc).split())[:200]} (scored as no match; later "
              f"{kind}s are not printed)", file=sys.stderr, flush=True)
    return False


def math_verify_equal_direct(gt: str, pred: str, timeouts: bool = True) -> bool:
    """verl's math-verify comparison (gold parsed as LaTeX, prediction as expression or LaTeX)."""
    import logging

    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    # Without its own timeouts (our caller enforces one) math-verify warns on every call.
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    t = 5 if timeouts else None
    gold = parse("\\boxed{" + gt + "}", (LatexExtractionConfig(),), parsing_timeout=t)
    got = parse("\\boxed{" + pred + "}", (LatexExtractionConfig(), ExprExtractionConfig()), parsing_timeout=t)
    if not gold or not got:
        return False
    return bool(verify(gold, got, timeout_seconds=t))


def _serve(conn) -> None:  # pragma: no cover - runs in the worker process
    import math_verify  # noqa: F401 - the slow import happens before "ready", outside any request's time limit

    conn.send("ready")
    while True:
        try:
            req = conn.recv()
        except (EOFError, OSError):
            return
        if req is None:
            return
        gt, pred = req
        try:
            # math-verify's own timeouts use signal.alarm; the parent's hard kill is the limit instead
            ok = math_verify_equal_direct(gt, pred, timeouts=False)
        except BaseException as e:  # noqa: BLE001 - a failure is a non-match, never a crash of the worker
            ok = no_match(e)
        conn.send(ok)


STARTUP_S = 60.0  # a fresh worker's sympy/math-verify import, before it takes requests
_startup = threading.local()  # seconds this thread spent starting a worker: not part of a response's time limit


def take_startup_s() -> float:
    """Seconds the calling thread spent starting math-verify workers since the last call (then reset)."""
    spent = getattr(_startup, "s", 0.0)
    _startup.s = 0.0
    return spent


def _start():
    """A worker that has imported math-verify (its "ready"), so a request's time limit is the request's alone."""
    import time

    from gspo_cli.rewards._proc import Child

    started = time.monotonic()
    child = Child("gspo_cli.rewards.fallback:_serve")
    try:
        if not child.conn.poll(STARTUP_S) or child.conn.recv() != "ready":
            child.kill()
            raise OSError("math-verify worker did not start")
    finally:
        _startup.s = getattr(_startup, "s", 0.0) + time.monotonic() - started
    return child


def _stop() -> None:
    global _worker
    if _worker is not None:
        _worker.kill()
        _worker = None


def math_verify_equal(gt: str, pred: str, timeout_s: float = 10.0) -> bool | None:
    """True/False from math-verify, or None when it overran `timeout_s` (the worker is then killed)."""
    global _worker
    if len(gt) > MAX_FALLBACK_CHARS or len(pred) > MAX_FALLBACK_CHARS:
        return False
    if _IN_PROCESS and threading.current_thread() is threading.main_thread():
        try:
            return math_verify_equal_direct(gt, pred, timeouts=False)
        except Exception as e:  # noqa: BLE001 - sympy raises many types; a non-match, reported once
            return no_match(e)
    with _lock:
        for _attempt in range(2):
            if _worker is None or not _worker.alive():
                try:
                    _worker = _start()
                except OSError:
                    return None
            w = _worker
            try:
                w.conn.send((gt, pred))
                if w.conn.poll(timeout_s):  # the hard limit: math-verify's own signal.alarm timeouts are off
                    return bool(w.conn.recv())
                _stop()
                return None
            except (EOFError, OSError, BrokenPipeError):
                _stop()  # the worker died; retry once with a fresh one
        return None

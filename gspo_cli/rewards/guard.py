"""No silent reward errors: every response's scoring is timed, and an exception or an overrun is counted.

`guarded(fn)` runs the scoring of one response and returns (result, error, timeout):

- an exception inside scoring is caught (one bad sample must not crash a training step) but counted in
  `TALLY` and reported on stderr the first time, with its type and message: a verifier bug shows up as
  `reward/errors` in the step's metrics and a health warning, never as a flat reward curve;
- a per-response time limit (`limit_s()`, 10 s, `GSPO_REWARD_TIMEOUT_S` to change it) holds without
  `signal.alarm` (which only works on a main thread: verl's reward workers call from other threads, verl#5635):
  the only unbounded step, math-verify/sympy, runs in a child process that is killed when it overruns
  (`fallback.py`), everything else is linear in a length-capped text (see the degenerate-input tests), and a
  response whose scoring took longer than the limit anyway is scored wrong and counted in `reward/timeouts`.

The counts are process-wide (`TALLY`); the native trainer takes `TALLY.snapshot()` before scoring a step and
logs `TALLY.since(snapshot)`. verl's reward workers are other processes, so there each result also carries the
counts per response (`reward_errors`, `reward_timeouts`, see score.compute_score).

`GSPO_REWARD_FAULT=error:K` (or `timeout:K`) makes every K-th response's scoring raise (or overrun the limit):
fault injection for the health rule and the metrics, at the reward layer, outside the trainer.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from gspo_cli.rewards.fallback import take_startup_s  # a light module: sympy loads only in its worker

DEFAULT_LIMIT_S = 10.0
ERRORS, TIMEOUTS, SCORED = "reward/errors", "reward/timeouts", "reward/scored"


_limit_cache: tuple[str | bytes | None, float] = (None, DEFAULT_LIMIT_S)
_LIMIT_VAR = "GSPO_REWARD_TIMEOUT_S"
# os.environ.get of a variable that is not set costs a KeyError inside the mapping (~0.6 us, 1.5% of scoring a
# response); os.environ keeps its values in a plain dict (`_data`, bytes keys on POSIX) that every write through
# os.environ updates, so reading it sees the same value. Any other layout: os.environ.get.
_ENV_DATA = getattr(os.environ, "_data", None)
_ENV_KEY = os.environ.encodekey(_LIMIT_VAR) if isinstance(_ENV_DATA, dict) and hasattr(os.environ, "encodekey") else None


def _raw_limit() -> str | bytes | None:
    if _ENV_KEY is not None and getattr(os.environ, "_data", None) is _ENV_DATA:
        return _ENV_DATA.get(_ENV_KEY)  # type: ignore[union-attr]
    return os.environ.get(_LIMIT_VAR)


def limit_s() -> float:
    """The per-response limit: GSPO_REWARD_TIMEOUT_S seconds, else DEFAULT_LIMIT_S (parsed once per value)."""
    global _limit_cache
    raw = _raw_limit()
    if raw != _limit_cache[0]:
        text = os.environ.get(_LIMIT_VAR) if isinstance(raw, bytes) else raw  # decoded as os.environ decodes it
        try:
            value = max(0.001, float(text)) if text else DEFAULT_LIMIT_S
        except ValueError:
            value = DEFAULT_LIMIT_S
        _limit_cache = (raw, value)
    return _limit_cache[1]


class RewardTimeout(Exception):
    """Raised by a scorer that knows it ran out of time (math-verify's worker was killed)."""


class Tally:
    """Process-wide counts of scored responses, scoring exceptions and time-outs (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.scored = self.errors = self.timeouts = 0
        self._reported: set[str] = set()

    def add(self, error: bool, timeout: bool) -> None:
        with self._lock:
            self.scored += 1
            self.errors += error
            self.timeouts += timeout

    def snapshot(self) -> tuple[int, int, int]:
        with self._lock:
            return self.scored, self.errors, self.timeouts

    def since(self, snap: tuple[int, int, int]) -> dict[str, float]:
        """The step's metrics: responses scored, exceptions and time-outs since `snap`."""
        now = self.snapshot()
        return {SCORED: float(now[0] - snap[0]), ERRORS: float(now[1] - snap[1]), TIMEOUTS: float(now[2] - snap[2])}

    def report_once(self, kind: str, message: str) -> None:
        """The first error (and first time-out) of this process on stderr; the rest are counted only."""
        with self._lock:
            if kind in self._reported:
                return
            self._reported.add(kind)
        print(f"gspo reward {kind}: {message} (counted in reward/{kind}s; later ones are counted, not printed)",
              file=sys.stderr, flush=True)


TALLY = Tally()


class _Fault:
    """GSPO_REWARD_FAULT=error:K | timeout:K, read once per process."""

    def __init__(self) -> None:
        self.kind, self.every, self.calls = "", 0, 0
        spec = os.environ.get("GSPO_REWARD_FAULT", "").strip()
        kind, _, every = spec.partition(":")
        if spec and (kind not in ("error", "timeout") or not every.isdigit() or int(every) < 1):
            raise ValueError(f"GSPO_REWARD_FAULT={spec!r}: expected error:K or timeout:K (every K-th response)")
        if spec:
            self.kind, self.every = kind, int(every)
        self._lock = threading.Lock()

    def fire(self, limit: float) -> None:
        if not self.every:
            return
        with self._lock:
            self.calls += 1
            hit = self.calls % self.every == 0
        if hit and self.kind == "error":
            raise RuntimeError(f"GSPO_REWARD_FAULT: injected scoring error (response {self.calls})")
        if hit:
            time.sleep(limit * 1.05)


_fault: _Fault | None = None


def _inject(limit: float) -> None:
    global _fault
    if _fault is None:
        _fault = _Fault()
    _fault.fire(limit)


def guarded(fn: Callable[[], Any], fallback: Any, limit: float | None = None) -> tuple[Any, bool, bool]:
    """(fn(), error, timeout): `fallback` on an exception or when scoring overran the limit (`limit_s()` unless
    given); counted in TALLY."""
    if limit is None:
        limit = limit_s()
    take_startup_s()
    start = time.monotonic()
    error = timeout = False
    try:
        _inject(limit)
        result = fn()
    except RewardTimeout:
        result, timeout = fallback, True
    except Exception as e:  # noqa: BLE001 - counted and reported, never a crashed training step
        result, error = fallback, True
        TALLY.report_once("error", f"{type(e).__name__}: {str(e)[:200]}")
    elapsed = time.monotonic() - start
    if not error and elapsed > limit and elapsed - take_startup_s() > limit:  # a worker's one-off start excluded
        result, timeout = fallback, True
    if timeout:
        TALLY.report_once("timeout", f"scoring one response took more than {limit:g}s; it is scored wrong")
    TALLY.add(error, timeout)
    return result, error, timeout

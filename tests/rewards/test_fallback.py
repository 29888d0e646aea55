"""The math-verify fallback: a real worker process, killed on overrun and replaced; safe off the main thread."""

from __future__ import annotations

import os
import signal
from concurrent.futures import ThreadPoolExecutor

from gspo_cli.rewards import compute_score, fallback


def test_overrun_kills_the_worker_and_the_next_call_gets_a_fresh_one():
    assert fallback.math_verify_equal("x+1", "1+x") is True  # starts and warms the worker
    first = fallback._worker
    assert first is not None and first.alive()
    # A worker that cannot answer (stopped, as a hung sympy call would be) overruns for sure, however loaded the
    # machine: with timeout 0 alone, a fast worker sometimes answered before the poll.
    os.kill(first.proc.pid, signal.SIGSTOP)
    assert fallback.math_verify_equal("x+2", "2+x", timeout_s=0.2) is None
    assert fallback._worker is None and not first.alive()
    assert fallback.math_verify_equal("x+1", "x-1") is False
    assert fallback._worker is not first and fallback._worker.alive()


def test_long_answers_never_reach_sympy():
    assert fallback.math_verify_equal("x", "x" * (fallback.MAX_FALLBACK_CHARS + 1)) is False


def test_threads_get_the_same_verdicts():
    cases = [
        ("\\boxed{x^2 - x^2}", "0", True),
        ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}", True),
        ("\\boxed{1+x}", "x+1", True),
        ("\\boxed{x-1}", "x+1", False),
        ("Answer: 033", "33", True),
    ] * 4
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda c: compute_score("aime24", c[0], c[1])["acc"], cases))
    assert got == [c[2] for c in cases]


def test_a_math_verify_exception_is_a_non_match_said_once(monkeypatch, capsys):
    """In-process math-verify that raises: no match, and the cause on stderr the first time per exception type
    (control: a comparison that does not raise says nothing)."""
    monkeypatch.setattr(fallback, "_said", set())
    monkeypatch.setattr(fallback, "_IN_PROCESS", True)
    assert fallback.math_verify_equal("1/2", "0.5") is True
    assert capsys.readouterr().err == ""

    def broken(gt, pred, timeouts=True):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(fallback, "math_verify_equal_direct", broken)
    assert fallback.math_verify_equal("1/2", "0.5") is False
    assert fallback.math_verify_equal("1/3", "0.5") is False
    err = capsys.readouterr().err.splitlines()
    assert err == ["gspo reward math-verify: RecursionError: maximum recursion depth exceeded (scored as no match; "
                   "later RecursionErrors are not printed)"]

"""Scorers for score_batch tests, imported by name inside the batch worker processes."""

from __future__ import annotations

import os
import signal

from gspo_cli.rewards import compute_score


def misbehave(data_source, solution_str, ground_truth, extra_info=None):
    """Behaves like compute_score except on a few trigger responses."""
    if solution_str == "hang-python":
        while True:  # interruptible by the worker's own timer
            pass
    if solution_str == "hang-c":
        # Like C code that never returns to the interpreter: the worker's timer signal cannot get through.
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
        while True:
            pass
    if solution_str == "raise":
        raise ValueError("boom")
    if solution_str == "exit":
        os._exit(3)
    return compute_score(data_source, solution_str, ground_truth, extra_info)

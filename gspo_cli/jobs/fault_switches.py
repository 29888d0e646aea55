"""The fault-injection switches of gspo's tests: loud when on, and kept out of jobs unless a test asks.

`GSPO_FAULT` (the native trainer misbehaves at a step: engines/native/faults.py) and `GSPO_REWARD_FAULT` (every
K-th reward raises or overruns: rewards/guard.py) exist so tests can break real runs on purpose. A switch left
set in a shell would otherwise break a real run silently ("pg_loss is NaN" and no word of why), so:

- every gspo command and every gspo job announces each active switch on stderr (`announce`);
- a Ray job gets them only when the submitting environment also sets `GSPO_FAULTS_TO_JOBS=1`, which the tests
  that inject faults into jobs set next to the switch (`forwarded`); otherwise the submit says they stay behind.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

SWITCHES = {
    "GSPO_FAULT": "the native trainer injects faults (NaN loss, hang, crash, slow steps)",
    "GSPO_REWARD_FAULT": "the reward raises or times out on purpose",
}
FORWARD_VAR = "GSPO_FAULTS_TO_JOBS"


def active(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The switches set (non-empty) in `env` (default: this process's environment)."""
    env = os.environ if env is None else env
    return {name: env[name] for name in SWITCHES if env.get(name, "").strip()}


def announce(where: str = "gspo", env: Mapping[str, str] | None = None) -> None:
    """One stderr line per active switch."""
    for name, value in active(env).items():
        print(f"warning: {where}: fault injection is ON: {name}={value!r} ({SWITCHES[name]}); a test switch, "
              f"unset it for real runs", file=sys.stderr, flush=True)


def forwarded(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The switches a Ray job gets: all active ones when `GSPO_FAULTS_TO_JOBS=1` is set, else none (and a line
    saying so when some are set)."""
    env = os.environ if env is None else env
    switches = active(env)
    if not switches:
        return {}
    if env.get(FORWARD_VAR) == "1":
        return switches
    print(f"warning: {', '.join(switches)} not passed to the Ray job (set {FORWARD_VAR}=1 as well to inject the "
          "fault there)", file=sys.stderr, flush=True)
    return {}

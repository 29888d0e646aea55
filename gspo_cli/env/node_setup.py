"""Per-node setup that is not an environment variable: the open-files limit (`env.nofile` of the preset).

Ray opens a socket or pipe per worker and connection, and verl starts hundreds of workers on a 16-NPU node, so
the upstream script runs `ulimit -n 32768` before launching. `raise_nofile` does the same for this process, so
the `ray start` that gspo spawns next (and the raylet and every worker it forks) inherits the higher soft limit.
It raises the soft limit to the preset's value, and the hard limit too where this process may (root with
CAP_SYS_RESOURCE); otherwise it stops at the hard limit and says so (`short`), and `gspo env doctor` fails the
node until limits.conf is fixed: a node short of descriptors still starts, as the fix needs a new login.
"""

from __future__ import annotations

import re
import resource
from dataclasses import dataclass
from typing import Any

UNLIMITED = resource.RLIM_INFINITY


@dataclass(frozen=True)
class NofileChange:
    want: int
    before: int  # soft limit before (RLIM_INFINITY = unlimited)
    after: int
    hard: int

    @property
    def raised(self) -> bool:
        return self.after != self.before

    @property
    def short(self) -> bool:
        return not _enough(self.after, self.want)

    def warning(self) -> str:
        return (f"open-files limit {self.after} is below the preset's env.nofile {self.want} (hard limit "
                f"{self.hard}): {limits_fix(self.want)}")


def limits_fix(want: int) -> str:
    return (f"run `ulimit -n {want}` in the shell that starts Ray (gspo cluster up/join do it); if the hard limit "
            f"is lower, add `* soft nofile {want}` and `* hard nofile {want}` to /etc/security/limits.conf "
            "and log in again (or start as root)")


def _enough(limit: int, want: int) -> bool:
    return limit == UNLIMITED or limit >= want


def raise_nofile(want: int | None) -> NofileChange | None:
    """Raise this process's soft RLIMIT_NOFILE to `want` (never lower it); None when the preset sets no limit.
    Past the hard limit only a privileged process gets further: then the soft limit stops at the hard one."""
    if want is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if _enough(soft, want):
        return NofileChange(want, soft, soft, hard)
    if not _enough(hard, want):
        try:  # only a privileged process may raise the hard limit
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
        except (ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    else:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    after, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return NofileChange(want, soft, after, hard)


def probe_nofile(host) -> dict[str, Any]:
    """Soft and hard open-files limits of this process (`Max open files` in /proc/self/limits), which the shell
    that ran gspo (or, on a Ray worker, the raylet) passed down. None = unlimited."""
    path = host.path("/proc/self/limits")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return {"soft": None, "hard": None, "error": f"cannot read {host.unroot(path)}: {exc.strerror or exc}"}
    m = re.search(r"^Max open files\s+(\S+)\s+(\S+)", text, re.MULTILINE)
    if not m:
        return {"soft": None, "hard": None, "error": f"no 'Max open files' line in {host.unroot(path)}"}

    def number(value: str) -> int | None:
        return None if value == "unlimited" else int(value)

    return {"soft": number(m.group(1)), "hard": number(m.group(2)), "raw": [m.group(1), m.group(2)]}

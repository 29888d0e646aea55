"""One check result type for every command that judges something (`gspo env doctor`, the verl preflight of
`gspo train --dry-run`, the verl schema check). Tables colour the status with `gspo_cli.console.styled`.

Status, from bad to good: `error` (the run will break or misbehave: exit non-zero), `warn` (works but is
probably not what you want), `info` (a figure worth seeing), `ok`, `skip` (does not apply here, or cannot be
judged). No heavy imports: `gspo --help` loads this.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ERROR, WARN, INFO, OK, SKIP = "error", "warn", "info", "ok", "skip"
STATUSES = (ERROR, WARN, INFO, OK, SKIP)


@dataclass
class Check:
    name: str  # what was judged, e.g. `npu.health` or `rollout memory`
    status: str  # one of STATUSES
    message: str  # what was found
    keys: list[str] = field(default_factory=list)  # preset keys that decide it (preflight)
    fix: str | None = ""  # how to fix it; empty when nothing is wrong (None is accepted and stored as "")
    node: str = ""  # the node it was judged on (`gspo env doctor --cluster`)

    def __post_init__(self) -> None:
        self.fix = self.fix or ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def has_errors(checks: list[Check]) -> bool:
    return any(c.status == ERROR for c in checks)


def counts(checks: list[Check], statuses: tuple[str, ...] = STATUSES) -> dict[str, int]:
    """status -> how many checks have it, in `statuses` order (zeros included)."""
    return {s: sum(c.status == s for c in checks) for s in statuses}

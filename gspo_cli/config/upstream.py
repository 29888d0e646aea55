"""`upstream`: the upstream script a preset reproduces and its deliberate departures (the parity tests check them,
tests/engines/verl/test_upstream_parity.py; the dry-run shows them, engines/verl/upstream.py)."""

from __future__ import annotations

from pydantic import Field

from gspo_cli.config.section import Section


class Departure(Section):
    """One place where a preset deliberately differs from the upstream script it follows."""

    # A verl key (after verl 0.9.1's renames), `env:NAME`, or `ulimit:nofile`.
    key: str
    upstream: str  # as the script sets it ("unset": verl's default applies)
    ours: str  # as gspo compiles it; `<...>` describes a value that depends on the host
    why: str


class UpstreamSection(Section):
    """The upstream script a preset reproduces, and every deliberate difference (checked by the parity tests)."""

    script: str | None = None  # path in the verl repository
    commit: str | None = None
    departures: list[Departure] = Field(default_factory=list)

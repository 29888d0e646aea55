"""The dry-run's view of a preset's departures from its upstream verl script (`upstream.departures`, checked by
the parity tests, tests/engines/verl/test_upstream_parity.py, which run the script with bash and compare it with the
compiled preset: tests/engines/verl/upstream_tools.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

    from gspo_cli.config.schema import Preset


def departures_table(preset: Preset) -> Table | None:
    """The dry-run's table of the preset's departures from its upstream script (a rich Table), or None."""
    from rich.markup import escape
    from rich.table import Table

    up = preset.upstream
    if not up.departures and not up.script:
        return None
    table = Table(title=f"Departures from upstream {up.script or ''}".rstrip(), title_justify="left")
    for col in ("key", "upstream", "ours", "why"):
        table.add_column(col, overflow="fold")
    for d in up.departures:
        table.add_row(escape(d.key), escape(d.upstream), escape(d.ours), escape(d.why))
    if not up.departures:
        table.add_row("-", "-", "-", "none on the keys the parity test compares (tests/engines/verl/test_upstream_parity.py)")
    return table

"""How `gspo env doctor | exports` print: the doctor's table of checks and their tally (with --json: exit code,
seconds, preset, checks and facts), one failure signature (--explain), the exports as `sh` lines or JSON."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from rich.markup import escape
from rich.table import Table

from gspo_cli.console import err, out, styled


def doctor_data(result: Any, loaded: Any) -> dict[str, Any]:
    return {"exit_code": result.exit_code, "seconds": result.seconds, "preset": getattr(loaded, "name", None),
            "checks": [c.to_dict() for c in result.checks],
            "facts": result.facts if result.facts is not None else result.nodes}


def render_doctor(result: Any, loaded: Any, cluster: bool) -> None:
    from gspo_cli.checks import counts

    checks = result.checks
    table = doctor_table(checks, title="gspo env doctor" + (f" --preset {loaded.name}" if loaded else ""),
                         width=out.width, cluster=cluster)
    out.print(table)
    tally = counts(checks, ("ok", "warn", "error", "skip"))
    err.print(", ".join(f"{n} {s}" for s, n in tally.items()) + f" in {result.seconds:.1f} s")


def render_explain(text: str) -> None:
    out.print(text, highlight=False, markup=False, soft_wrap=True)


def write_sh(result: Any) -> None:
    sys.stdout.write(result.as_sh())


def _longest_word(texts: Iterable[Any]) -> int:
    """The longest run without a space in `texts` (a path such as /etc/security/limits.conf)."""
    return max((len(w) for t in texts for w in str(t).split()), default=0)


def doctor_table(checks: list[Any], *, title: str, width: int, cluster: bool = False) -> Table:
    """The doctor's table for a terminal `width` wide: check names and statuses whole; found and fix each get at
    least their longest word while they fit (fix first), so text wraps between words ('limits.c onf' was
    /etc/security/limits.conf folded in a 22-column fix column). A word wider than what is left folds."""
    table = Table(title=title, title_justify="left")
    fixed = max([5, *(len(c.name) for c in checks)]) + max([6, *(len(c.status) for c in checks)])
    columns = 4 + (1 if cluster else 0)
    left = width - fixed - 3 * columns - 1 - (12 if cluster else 0)  # borders and padding: 3 per column + 1
    fix_min = min(_longest_word(c.fix for c in checks), left * 2 // 3)  # commands and paths to copy: first
    found_min = min(_longest_word(c.message for c in checks), left - fix_min)
    if cluster:
        table.add_column("node", overflow="fold")
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("found", overflow="fold", min_width=max(found_min, 0))
    table.add_column("fix", overflow="fold", min_width=max(fix_min, 0))
    for c in checks:
        row = [escape(c.name), styled(c.status), escape(c.message), escape(c.fix)]
        table.add_row(*([escape(c.node or "-")] if cluster else []), *row)
    return table

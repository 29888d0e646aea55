"""How `gspo prepare-model` prints (with --json: hub_fetch's report as it is): what was fetched from where on stderr,
the prepared folder on stdout (for `$(gspo prepare-model ...)`)."""

from __future__ import annotations

from typing import Any

from gspo_cli.console import err, out


def render_prepared(report: dict[str, Any]) -> None:
    hub = f"{report['hub']} {report['endpoint']}"
    err.print(f"{report['status']}: {report['repo']}@{report['revision']} from {hub} ({report['summary']})",
              highlight=False, markup=False, soft_wrap=True)
    out.print(report["folder"], highlight=False, markup=False, soft_wrap=True)

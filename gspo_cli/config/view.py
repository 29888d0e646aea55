"""How `gspo presets list | show` print (with --json: the catalog rows; the preset as written, or --resolved, with
its secret env.vars redacted): the presets table (stacked at 80 columns), the preset as YAML with its file on
stderr, the configuration traps `gspo train` would refuse or warn about; where `copy` wrote the fork."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from gspo_cli.console import err, out, styled
from gspo_cli.shell import quote


def render_list(rows: list[dict[str, Any]]) -> None:
    table = Table(title="gspo presets", title_justify="left", pad_edge=False)
    if out.width >= 120:
        table.add_column("name", no_wrap=True)
        for col in ("aliases", "model", "cluster", "engine"):
            table.add_column(col, overflow="fold")
        table.add_column("description", min_width=24, ratio=1)
        for row in rows:
            table.add_row(row["name"], ", ".join(row["aliases"]), row["model"], row["cluster"], row["engine"],
                          row["description"])
    else:  # 80 columns: aliases under the name, model/cluster/engine stacked, so no column is cut to "mo…"
        table.add_column("name (aliases)", no_wrap=True)
        table.add_column("model, cluster, engine", no_wrap=True)
        table.add_column("description", ratio=1)
        for row in rows:
            aliases = f"\n[dim]{', '.join(row['aliases'])}[/]" if row["aliases"] else ""
            table.add_row(row["name"] + aliases, f"{row['model'].rsplit('/', 1)[-1]}\n{row['cluster']}, {row['engine']}",
                          row["description"])
    out.print(table)


def shown_data(loaded: Any, resolved: bool) -> dict[str, Any]:
    """The preset as `show` prints it: every value after extends, defaults and --set, or the file as written (a
    copy: the caller redacts it in place)."""
    return loaded.preset.model_dump(mode="json") if resolved else copy.deepcopy(loaded.source.data)


def render_show(loaded: Any, data: dict[str, Any], resolved: bool, traps: Callable[[Any], Iterable[Any]]) -> None:
    """The preset as YAML (`data` when --resolved, else its file's own text), then its traps (`traps(preset)`:
    engines/verl/traps.py `checks`, handed in by the CLI) that are errors or warnings."""
    import yaml
    from rich.syntax import Syntax

    text = yaml.safe_dump(data, sort_keys=False) if resolved else loaded.source.path.read_text(encoding="utf-8")
    err.print(f"[dim]{loaded.source.path}[/]")
    out.print(Syntax(text, "yaml", background_color="default"))
    for c in traps(loaded.preset):
        if c.status in ("error", "warn"):
            err.print(f"{styled(c.status)} {escape(c.name)}: {escape(c.message)}"
                      + (f"\n  fix: {escape(c.fix)}" if c.fix else ""))


def render_copied(written: Path) -> None:
    """Where the fork went and how to name it: a preset in $GSPO_HOME/presets by its name, one elsewhere by its
    path."""
    from gspo_cli import layout

    in_home = written.parent.resolve() == layout.user_presets_dir().resolve()
    ref = written.stem if in_home else str(written)
    err.print(f"Wrote {written}. Edit it, then: gspo train --preset {quote(ref)} --dry-run", highlight=False,
              markup=False)

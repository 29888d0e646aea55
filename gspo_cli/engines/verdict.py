"""The head of every `gspo train --dry-run`: the verdict first, then each error and warning with its fix.

Both engines print this before their details, so the answer ("launchable or not, and what to change") is on the
first screen at 80 columns however long the details are. Lines are folded to the terminal width with a hanging
indent, so a long message or fix stays readable.
"""

from __future__ import annotations

import textwrap

from gspo_cli.checks import ERROR, WARN, Check

MARK = {ERROR: "error", WARN: "warn "}


def verdict_line(errors: int, warnings: int) -> str:
    if errors:
        return f"NOT LAUNCHABLE: {errors} error(s), {warnings} warning(s)"
    return f"ready to launch ({warnings} warning(s))"


def head_lines(checks: list[Check], *, width: int, title: str) -> list[str]:
    """`Verdict: ...` then one folded entry per error, then per warning: `error name: message` / `fix: ...`."""
    errors = [c for c in checks if c.status == ERROR]
    warnings = [c for c in checks if c.status == WARN]
    lines = textwrap.wrap(f"Verdict: {verdict_line(len(errors), len(warnings))} ({title})", width=width,
                          subsequent_indent="  ")
    for c in errors + warnings:
        lines += textwrap.wrap(f"{MARK[c.status]} {c.name}: {c.message}", width=width, initial_indent="  ",
                               subsequent_indent="        ", break_on_hyphens=False)
        if c.fix:
            lines += textwrap.wrap(f"fix: {c.fix}", width=width, initial_indent="        ",
                                   subsequent_indent="             ", break_on_hyphens=False)
    return lines


def print_head(checks: list[Check], *, title: str) -> None:
    """Print the verdict head on stdout, coloured: red for errors, yellow for warnings."""
    from rich.markup import escape

    from gspo_cli.console import out

    width = max(40, min(out.width, 120))
    for line in head_lines(checks, width=width, title=title):
        style = "bold red" if line.startswith(("Verdict: NOT", "  error")) else \
            "bold green" if line.startswith("Verdict:") else "yellow" if line.startswith("  warn") else ""
        out.print(f"[{style}]{escape(line)}[/]" if style else escape(line), highlight=False, soft_wrap=True)


def print_rest(checks: list[Check]) -> None:
    """The details under the head: one line per check that is neither an error nor a warning (those are in the
    head), cut at the terminal width; `--verbose` / `--json` have them whole."""
    from rich.markup import escape

    from gspo_cli.console import out, styled

    rest = [c for c in checks if c.status not in (ERROR, WARN)]
    out.print(f"[bold]Checks[/] ({len(checks)}; errors and warnings above):")
    room = max(40, min(out.width, 120)) - 8
    for c in rest:
        text = f"{c.name}: {c.message}"
        text = text if len(text) <= room else text[:room - 1] + "\u2026"
        out.print(f"  {styled(c.status)}{' ' * (5 - len(c.status))} {escape(text)}", highlight=False,
                  soft_wrap=False)

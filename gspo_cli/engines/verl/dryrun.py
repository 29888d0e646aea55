"""The dry-run view of a verl plan (`gspo train --preset P --dry-run`): preflight table, schema verdict,
overrides with the preset key each came from, env (secrets redacted), the Ray job entrypoint."""

from __future__ import annotations


def render(plan, plan_line: str | None = None) -> None:  # plan: launch.Plan
    """The dry-run: preflight table, schema verdict, overrides, env (secrets redacted), entrypoint, and
    `plan_line`: gspo plan's prediction, computed by the caller (gspo_cli.plan sits above the engines)."""
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import out, styled
    from gspo_cli.engines.verl.compile import redact

    p = plan.preset
    out.print(f"[bold]gspo train[/] preset [bold]{p.name}[/] engine verl, run [bold]{plan.run_name}[/]"
              + (f" (resume from {plan.resume_from})" if plan.resume_from else ""))
    if plan.sets:
        out.print("--set changes: " + ", ".join(escape(s) for s in plan.sets))
    table = Table(title="Preflight", show_lines=False)
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for c in plan.report.checks:
        detail = escape(c.message) + (f"\n[dim]fix: {escape(c.fix)}[/]" if c.fix else "")
        table.add_row(escape(c.name), styled(c.status), detail)
    if plan.schema is not None:
        if plan.schema_error is None:
            how = ("Hydra compose (struct mode) + types ok; verl validate_config: "
                   + ("cached verdict for these overrides" if plan.schema.cached else "ok"))
            table.add_row("verl schema", styled("ok"), f"verl {plan.schema.verl_version}: {how}")
        else:
            detail = escape(plan.schema_error.message) + (f"\n[dim]fix: {escape(plan.schema_error.hint)}[/]"
                                                          if plan.schema_error.hint else "")
            table.add_row("verl schema", styled("error"), detail)
    out.print(table)
    from gspo_cli.engines.verl.upstream import departures_table

    departures = departures_table(p)
    if departures is not None:
        out.print(departures)
    out.print("[bold]verl overrides[/] (preset key in brackets):")
    for item in plan.compiled.overrides:
        from gspo_cli.engines.verl.compile import override_key

        origin = plan.compiled.origins.get(override_key(item), "")
        out.print(f"  {escape(item)}  [dim]\\[{escape(origin)}][/]", highlight=False, soft_wrap=True)
    out.print("[bold]runtime env[/] (secrets redacted):")
    for k, v in redact(plan.compiled.env_vars, list(plan.preset.env.secrets)).items():
        out.print(f"  {k}={escape(v)}", highlight=False)
    out.print(f"[bold]Ray job entrypoint[/]: {escape(plan.entrypoint)}", highlight=False, soft_wrap=True)
    python = plan.entrypoint.split(" ", 1)[0]
    out.print(f"[bold]which runs[/] (in the run folder): {escape(plan.compiled.verl_command(python))}",
              highlight=False, soft_wrap=True)
    for note in plan.compiled.notes:
        out.print(f"[dim]note: {escape(note)}[/]")
    if plan_line:
        out.print(escape(plan_line), highlight=False, soft_wrap=True)
    errors = len(plan.report.errors) + (plan.schema_error is not None)
    verdict = (f"[bold red]{errors} error(s)[/], {len(plan.report.warnings)} warning(s): not launchable"
               if errors else f"[green]ready to launch[/] ({len(plan.report.warnings)} warning(s))")
    out.print(f"Verdict: {verdict}  [dim](preflight + schema check {plan.timings.get('total', 0):.2f} s)[/]")

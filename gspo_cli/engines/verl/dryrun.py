"""The dry-run view of a verl plan (`gspo train --preset P --dry-run`).

First the verdict and every error and warning with its fix (engines/verdict.py), so the answer is on the first
screen. Then the details: by default one line per check, the predicted run and where the rest is; with
`--verbose` the full preflight table, the schema verdict, the overrides with the preset key each came from, the
env (secrets redacted) and the Ray job entrypoint. `--json` has everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from gspo_cli.checks import ERROR, OK, Check

if TYPE_CHECKING:
    from pathlib import Path

    from gspo_cli.config.devices import Resolved
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.spec import Environment, Missing
    from gspo_cli.engines.verl.compile import Compiled
    from gspo_cli.engines.verl.schema_check import SchemaResult
    from gspo_cli.errors import ConfigError
    from gspo_cli.jobs.capacity import Need
    from gspo_cli.sizing.report import Report


class PlanView(Protocol):
    """What this view reads of a verl plan: launch.Plan (launch imports this module, so it is not named here)."""

    @property
    def preset(self) -> Preset: ...
    @property
    def run_name(self) -> str: ...
    @property
    def run_dir(self) -> Path: ...
    @property
    def compiled(self) -> Compiled: ...
    @property
    def report(self) -> Report: ...
    @property
    def entrypoint(self) -> str: ...
    @property
    def sets(self) -> list[str]: ...
    def shown_sets(self) -> list[str]: ...
    @property
    def resume_from(self) -> Path | None: ...
    @property
    def schema(self) -> SchemaResult | None: ...
    @property
    def schema_error(self) -> ConfigError | None: ...
    @property
    def timings(self) -> dict[str, float]: ...
    @property
    def device(self) -> Resolved | None: ...
    @property
    def need(self) -> Need | None: ...
    @property
    def missing(self) -> list[Missing]: ...
    @property
    def environment(self) -> Environment | None: ...


def device_line(plan: PlanView) -> str | None:
    """The device the job is compiled for (and why, for `auto`) and what it asks of the cluster."""
    if plan.device is None:
        return None
    why = f" ({plan.device.why})" if plan.device.asked != plan.device.name else ""
    need = f"; asks the cluster for {plan.need.describe()}" if plan.need is not None else ""
    return f"Device: {plan.device.name}{why}{need}"


def all_checks(plan: PlanView) -> list[Check]:
    """The preflight checks plus the verl schema check as one more row."""
    checks = list(plan.report.checks)
    env = plan.environment
    if env is not None and env.blocks:  # first in the verdict: nothing else matters until the job can start
        checks.insert(0, Check("environment", ERROR, f"this preset {env.short()}", [], env.fix))
    if plan.schema_error is not None:
        checks.append(Check("verl schema", ERROR, plan.schema_error.message, [], plan.schema_error.hint or ""))
    elif plan.schema is not None:
        how = "cached verdict for these overrides" if plan.schema.cached else "Hydra compose + validate_config ok"
        checks.append(Check("verl schema", OK, f"verl {plan.schema.verl_version}: {how}"))
    return checks


def render(plan: PlanView, plan_line: str | None = None, *, verbose: bool = False) -> None:
    """The verdict head, then the details (folded; all of them with `verbose`). `plan_line`: gspo plan's
    prediction, computed by the caller (gspo_cli.plan sits above the engines)."""
    from rich.markup import escape

    from gspo_cli.console import out
    from gspo_cli.engines.verdict import print_head, print_rest

    checks = all_checks(plan)
    print_head(checks, title=f"verl preflight + schema check, {plan.timings.get('total', 0):.2f} s")
    p = plan.preset
    exists = "exists" if plan.run_dir.is_dir() else "not created by a dry run"
    out.print(f"\nRun [bold]{escape(plan.run_name)}[/]: preset {escape(p.name)}, engine verl ({exists})"
              + (f", resumes from {escape(str(plan.resume_from))}" if plan.resume_from else ""), highlight=False, soft_wrap=False)
    if plan.sets:
        out.print("--set changes: " + ", ".join(escape(s) for s in plan.shown_sets()), highlight=False,
                  soft_wrap=False)
    line = device_line(plan)
    if line:
        out.print(escape(line), highlight=False, soft_wrap=False)
    env = plan.environment  # the engine spec's environment, asked of the job's interpreter
    if env is not None and not env.blocks:  # a blocking gap is the verdict's first error, with its fix
        colour = "green" if env.ok else "cyan" if env.checked_on else "yellow"  # cyan: judged on the nodes
        out.print(f"[{colour}]Environment:[/] {escape(env.line())}", highlight=False, soft_wrap=False)
    if plan_line:
        out.print(escape(plan_line), highlight=False, soft_wrap=False)
    if verbose:
        _details(plan)
        return
    print_rest(checks)
    up = p.upstream
    if up.script or up.departures:
        names = [d.key for d in up.departures]
        keys = ", ".join(names[:3]) + (f", +{len(names) - 3} more" if len(names) > 3 else "") \
            if names else "none on the compared keys"
        out.print(f"[bold]Departures from upstream[/] {escape(up.script or '')}: {len(up.departures)} "
                  f"({escape(keys)})", highlight=False, soft_wrap=False)
    out.print(f"[dim]Not shown: the full check details, {len(plan.compiled.overrides)} verl overrides, "
              f"{len(plan.compiled.env_vars)} env vars, the departures table and the Ray entrypoint: --verbose (or "
              "--json).[/]", soft_wrap=False)


def _details(plan) -> None:
    """--verbose: preflight table, schema verdict, overrides, env (secrets redacted), entrypoint."""
    from rich.markup import escape
    from rich.table import Table

    from gspo_cli.console import out, styled
    from gspo_cli.engines.verl.compile import redact

    p = plan.preset
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

"""The `gspo` command: a Typer app with one thin module per command group.

Heavy libraries (torch, ray, verl, transformers) are imported only inside the service functions the commands
call, so `gspo --help` starts fast.
"""

from __future__ import annotations

import os
import sys

import typer

from gspo_cli import __version__
from gspo_cli.cli import accept as accept_cli
from gspo_cli.cli import cluster as cluster_cli
from gspo_cli.cli import data as data_cli
from gspo_cli.cli import env as env_cli
from gspo_cli.cli import eval as eval_cli
from gspo_cli.cli import export as export_cli
from gspo_cli.cli import jobs as jobs_cli
from gspo_cli.cli import model as model_cli
from gspo_cli.cli import options
from gspo_cli.cli import plan as plan_cli
from gspo_cli.cli import presets as presets_cli
from gspo_cli.cli import report as report_cli
from gspo_cli.cli import runs as runs_cli
from gspo_cli.cli import score as score_cli
from gspo_cli.cli import train as train_cli

app = typer.Typer(
    name="gspo",
    help=(
        "From a bare Ascend NPU cluster (or a GPU box, or a laptop CPU) to a finished, evaluated GSPO run of Qwen3.\n\n"
        "Typical path: gspo env doctor -> gspo env exports -> gspo prepare-data -> gspo train -> gspo eval -> "
        "gspo report. Every command reads a preset (`gspo presets list`).\n\n"
        "--preset has no built-in default anywhere: the commands that act on one (prepare-data, train, plan, "
        "cluster up/join, env exports) require it, the others (eval, report, runs, env doctor) use it only for its "
        "settings and paths. Set GSPO_PRESET=NAME to name it once for a shell."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)

_state = {"debug": False}


def debug_enabled() -> bool:
    return _state["debug"] or os.environ.get("GSPO_DEBUG", "") not in ("", "0", "false")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"gspo {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = options.debug(),
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the gspo version and exit."
    ),
) -> None:
    _state["debug"] = _state["debug"] or debug
    if _state["debug"]:
        os.environ["GSPO_DEBUG"] = "1"  # jobs started from here show their tracebacks too


# Listed in the order of the pipeline, then the tools around it.
PIPELINE, OPERATE = "Pipeline", "Runs, cluster, jobs and presets"
app.add_typer(env_cli.app, name="env", rich_help_panel=PIPELINE)
app.command("prepare-data", rich_help_panel=PIPELINE)(data_cli.prepare_data_command)
app.command("prepare-model", rich_help_panel=PIPELINE)(model_cli.prepare_model_command)
app.command("plan", rich_help_panel=PIPELINE)(plan_cli.plan_command)
app.command("train", rich_help_panel=PIPELINE)(train_cli.train_command)
app.command("eval", rich_help_panel=PIPELINE)(eval_cli.eval_command)
app.command("report", rich_help_panel=PIPELINE)(report_cli.report_command)
app.command("score", rich_help_panel=PIPELINE)(score_cli.score_command)
app.command("export", rich_help_panel=PIPELINE)(export_cli.export_command)
app.command("accept", rich_help_panel=PIPELINE)(accept_cli.accept_command)
app.add_typer(runs_cli.app, name="runs", rich_help_panel=OPERATE)
app.add_typer(cluster_cli.app, name="cluster", rich_help_panel=OPERATE)
app.add_typer(jobs_cli.app, name="jobs", rich_help_panel=OPERATE)
app.add_typer(presets_cli.app, name="presets", rich_help_panel=OPERATE)

def _no_flag_placeholders() -> None:
    """typer 0.29 prints a `<bool>` type after every on/off flag (`--debug <bool>`), which reads as if the flag
    took a value: show no type for flags."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "_gspo_patched", False):
        return

    def display_type_rich(self, ctx):
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._gspo_patched = True
    TyperOption.display_type_rich = display_type_rich


_no_flag_placeholders()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: run the app, turning project errors into one clean line and an exit code."""
    from gspo_cli.errors import GspoError

    args = list(sys.argv[1:] if argv is None else argv)
    if "--debug" in args:
        _state["debug"] = True
    from gspo_cli.jobs.fault_switches import announce

    announce()  # GSPO_FAULT / GSPO_REWARD_FAULT left set: say so before anything runs
    try:
        app(args=args, prog_name="gspo", standalone_mode=True)
    except GspoError as exc:
        if debug_enabled():
            import traceback

            traceback.print_exc()
        from rich.markup import escape

        from gspo_cli.console import err
        from gspo_cli.untrusted import clean  # a message may quote a run name or a file's value

        err.print(f"[bold red]Error:[/] {escape(clean(exc.message, newlines=True))}", highlight=False)
        if exc.hint:
            err.print(f"[dim]Hint:[/] {escape(clean(exc.hint, newlines=True))}", highlight=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        sys.exit(130)

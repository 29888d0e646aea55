"""Option definitions shared by the commands: the flag names, short forms and metavars live here once.

Each function returns a fresh `typer.Option` (a command may word its help for what the option means there):

    def doctor(preset: str | None = options.preset(help="Judge against this preset."),
               sets: list[str] | None = options.sets("rollout.n=8"),
               json_out: bool = options.json_out()) -> None: ...
"""

from __future__ import annotations

from typing import Any

import typer

PRESET_HELP = "Preset name, alias or YAML path (gspo presets list)."
ADDRESS_HELP = "Ray address: dashboard URL or HEAD:PORT (default: the preset's, RAY_ADDRESS, else the node " \
               "`gspo cluster up/join` started on this host, else the embedded local head)."


# One rule for every command (stated in `gspo --help`): no built-in default preset; commands that act on a
# preset require it, the others use it only for its settings and paths; GSPO_PRESET names it once for a shell.
PRESET_ENV = "GSPO_PRESET"


def preset(*, required: bool = False, help: str = PRESET_HELP) -> Any:
    return typer.Option(... if required else None, "--preset", "-p", envvar=PRESET_ENV, help=help)


def sets(example: str = "actor.lr=1e-3") -> Any:
    return typer.Option(None, "--set", metavar="KEY=VALUE",
                        help=f"Override a preset key, repeatable: --set {example}.")


def json_out(help: str = "Print JSON for scripts (stdout holds only the JSON).") -> Any:
    return typer.Option(False, "--json", help=help)


def address(help: str = ADDRESS_HELP) -> Any:
    return typer.Option(None, "--address", help=help)


def local(help: str = "Run in this process instead of as a Ray job (same code as the job).") -> Any:
    return typer.Option(False, "--local", help=help)


def force(help: str) -> Any:
    return typer.Option(False, "--force", help=help)


def debug() -> Any:
    return typer.Option(False, "--debug", help="Show full tracebacks on errors (or set GSPO_DEBUG=1).")

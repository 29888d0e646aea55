"""Job kinds are explicit dispatch: every registered kind loads to a `main(argv: list[str]) -> int`, every command
gspo submits (JobSpec / entrypoint / command_line call sites, read from the source) is registered, and the wire
command `python -m gspo_cli.job_kinds` runs the registry."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path

from gspo_cli import job_kinds
from gspo_cli.jobs import entry

ROOT = Path(__file__).resolve().parents[2]
SUBMITTERS = {"JobSpec": 0, "entrypoint": 0, "command_line": 1}  # call name -> index of the command argument


def test_every_kind_loads_to_a_main_of_the_job_signature():
    assert job_kinds.KINDS
    for name, kind in job_kinds.KINDS.items():
        main = kind.load()
        assert callable(main), name
        params = list(inspect.signature(main).parameters.values())
        assert len(params) == 1 and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, (name, params)
        hints = typing.get_type_hints(main)
        assert hints.get(params[0].name) == list[str] and hints.get("return") is int, (name, hints)


def _names_in(path: Path, tree: ast.AST) -> dict:
    """What a module's names mean, its imports inside functions included (`from gspo_cli.data import job`)."""
    dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    names = dict(vars(importlib.import_module(dotted)))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gspo_cli"):
            for alias in node.names:
                base = importlib.import_module(node.module)
                value = getattr(base, alias.name, None)
                if value is None:
                    value = importlib.import_module(f"{node.module}.{alias.name}")
                names.setdefault(alias.asname or alias.name, value)
    return names


def _submitted_commands() -> list[tuple[str, str]]:
    """(where, command) of every call that submits or spawns a job, its command resolved in its module."""
    found = []
    for path in sorted((ROOT / "gspo_cli").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = None
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
            if name not in SUBMITTERS or path.name == "entry.py" and name == "command_line":
                continue
            arg = node.args[SUBMITTERS[name]] if len(node.args) > SUBMITTERS[name] else None
            if arg is None or (path.name == "client.py" and not isinstance(arg, ast.Constant)):
                continue  # submit_job forwarding its spec's command
            names = names if names is not None else _names_in(path, tree)
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            found.append((where, eval(compile(ast.Expression(arg), where, "eval"), names)))
    return found


def test_every_command_gspo_submits_is_registered():
    found = _submitted_commands()
    unregistered = [(where, cmd) for where, cmd in found if cmd not in job_kinds.KINDS]
    assert not unregistered, unregistered
    # the scan sees every kind (a kind nobody submits is dead; a scan that finds nothing proves nothing)
    assert {cmd for _, cmd in found} == set(job_kinds.KINDS), found


def test_the_jobs_layer_names_the_registry_only_by_its_wire_module():
    assert importlib.import_module(entry.ENTRY_MODULE) is job_kinds
    assert entry.command_line("py", "eval", ["r.json"]) == ["py", "-u", "-m", "gspo_cli.job_kinds", "eval", "r.json"]


def test_the_wire_command_lists_the_kinds_and_refuses_an_unknown_one():
    usage = subprocess.run([sys.executable, "-m", "gspo_cli.job_kinds"], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert usage.returncode == 2 and all(name in usage.stdout for name in job_kinds.KINDS)
    unknown = subprocess.run([sys.executable, "-m", "gspo_cli.job_kinds", "no-such-kind"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2
    assert "Error: unknown job command 'no-such-kind'" in unknown.stderr and "Hint: known: cluster-smoke" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    old = subprocess.run([sys.executable, "-m", "gspo_cli.jobs.entry", "eval", "r.json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert old.returncode == 2 and "python -m gspo_cli.job_kinds" in old.stderr

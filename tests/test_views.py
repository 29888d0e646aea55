"""One output path (console.emit): with --json a command prints its data as JSON and nothing else on stdout, else its
group's text view; the command modules in gspo_cli/cli/ branch on --json nowhere and print no JSON themselves."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from gspo_cli.console import emit

CLI = Path(__file__).resolve().parents[1] / "gspo_cli" / "cli"


def test_emit_prints_the_data_as_json_or_calls_the_text_view(capsys):
    shown = []
    emit(True, {"a": [1, 2]}, shown.append, "text")
    assert json.loads(capsys.readouterr().out) == {"a": [1, 2]} and shown == []
    emit(False, {"a": [1, 2]}, shown.append, "text")
    assert capsys.readouterr().out == "" and shown == ["text"]


def _json_branches(source: str) -> list[int]:
    """Lines that test `json_out` in an if (statement or expression) or call print_json directly."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.If, ast.IfExp)) and "json_out" in ast.unparse(node.test):
            hits.append(node.lineno)
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("print_json"):
            hits.append(node.lineno)
    return hits


def test_no_command_module_branches_on_json():
    # the control: the shape every command had before views (its own JSON branch) is found
    assert _json_branches("def f(json_out):\n    if json_out:\n        print_json({})\n") == [2, 3]
    found = {p.name: _json_branches(p.read_text(encoding="utf-8")) for p in sorted(CLI.glob("*.py"))}
    # prepare-data: with --json the job's follower prints the job's result; the table follows only without it
    assert {name: len(lines) for name, lines in found.items() if lines} == {"data.py": 1}

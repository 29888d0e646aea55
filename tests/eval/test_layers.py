"""`gspo_cli/eval` is a service: it imports shared pieces (models, rewards, data, layout, config, jobs), no engine."""

from __future__ import annotations

import ast
from pathlib import Path

import gspo_cli

ALLOWED = ("gspo_cli.eval", "gspo_cli.models", "gspo_cli.rewards", "gspo_cli.data", "gspo_cli.layout",
           "gspo_cli.config", "gspo_cli.jobs", "gspo_cli.errors", "gspo_cli.fsutil", "gspo_cli.metrics",
           "gspo_cli.runs", "gspo_cli.console")


def gspo_imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gspo_cli"):
            names += [node.module] if node.module != "gspo_cli" else [f"gspo_cli.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names if a.name.startswith("gspo_cli")]
    return names


def test_eval_imports_no_engine_and_no_cli():
    root = Path(gspo_cli.__file__).parent / "eval"
    bad = [f"{path.relative_to(root)}: {name}" for path in sorted(root.rglob("*.py")) for name in gspo_imports(path)
           if name != "gspo_cli.__version__" and not name.startswith(ALLOWED)]
    assert not bad, bad
    # the check itself sees imports inside functions (where eval imports most things)
    assert "gspo_cli.models.tiny" in gspo_imports(root / "service.py")

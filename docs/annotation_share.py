"""Share of annotated parameters of public functions, per package (the figure in docs/architecture.md "Types").

    .venv/bin/python docs/annotation_share.py [ROOT]      # ROOT: a checkout (default: this one)

Public: a module-level function or a method of a module-level class whose name has no leading underscore
(dunder methods count, `__init__` included); `self` / `cls` are not counted.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGES = ("config", "algo", "rewards", "engines", "jobs", "plan", "runs")


def _public_functions(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
            yield node, False
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    not item.name.startswith("_") or item.name.endswith("__")
                ):
                    yield item, True


def count(path: Path) -> tuple[int, int]:
    """(annotated, all) parameters of the public functions in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    annotated = total = 0
    for fn, is_method in _public_functions(tree):
        a = fn.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
                  *([a.kwarg] if a.kwarg else [])]
        if is_method and params and params[0].arg in ("self", "cls"):
            params = params[1:]
        total += len(params)
        annotated += sum(p.annotation is not None for p in params)
    return annotated, total


def main(root: Path) -> None:
    print(f"| package | annotated / parameters | share |\n|---|---|---|")
    grand = [0, 0]
    for pkg in PACKAGES:
        a = t = 0
        for path in sorted((root / "gspo_cli" / pkg).rglob("*.py")):
            da, dt = count(path)
            a, t = a + da, t + dt
        grand = [grand[0] + a, grand[1] + t]
        print(f"| {pkg} | {a} / {t} | {a / max(t, 1):.0%} |")
    print(f"| **all seven** | {grand[0]} / {grand[1]} | {grand[0] / max(grand[1], 1):.1%} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])

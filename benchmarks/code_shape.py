"""The shape of gspo_cli, per package, for one or two source trees: modules and lines, the longest modules and
functions, broad `except` handlers. Issue #43's "before -> after" table.

    .venv/bin/python benchmarks/code_shape.py [BASE_TREE] [CHANGED_TREE (default: this one)]

Lines are physical lines (`wc -l`); a function's length is its `def` to its last line (decorators excluded).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BROAD = {"Exception", "BaseException"}


@dataclass
class Shape:
    packages: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    modules: list[tuple[int, str]] = field(default_factory=list)
    functions: list[tuple[int, str]] = field(default_factory=list)
    broad_excepts: list[str] = field(default_factory=list)


def measure(tree: Path) -> Shape:
    shape = Shape()
    root = tree / "gspo_cli"
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        package = rel.parts[0] if len(rel.parts) > 1 else "(top-level)"
        source = path.read_text()
        lines = source.count("\n")
        shape.packages[package][0] += 1
        shape.packages[package][1] += lines
        shape.modules.append((lines, str(rel)))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                shape.functions.append((node.end_lineno - node.lineno + 1, f"{rel}:{node.name}"))
            elif isinstance(node, ast.ExceptHandler) and (node.type is None or ast.unparse(node.type) in BROAD):
                shape.broad_excepts.append(f"{rel}:{node.lineno}")
    return shape


def _cell(counts: list[int] | None) -> str:
    return f"{counts[0]} / {counts[1]:,}" if counts else "-"


def report(base: Shape | None, new: Shape) -> None:
    names = sorted(set(new.packages) | set(base.packages if base else ()))
    print("| package | modules / lines" + (" before | after |" if base else " |"))
    print("|---|---|" + ("---|" if base else ""))
    for name in names:
        row = f"| {name} | " + (f"{_cell(base.packages.get(name))} | " if base else "")
        print(row + f"{_cell(new.packages.get(name))} |")
    total = [[sum(v[i] for v in s.packages.values()) for i in (0, 1)] for s in ([base] if base else []) + [new]]
    print("| total | " + " | ".join(_cell(t) for t in total) + " |")
    for label, shape in (("before", base), ("after", new)):
        if shape is None:
            continue
        print(f"\n{label}: longest module {max(shape.modules)}, longest function {max(shape.functions)}; "
              f"modules > 400 lines {sorted((m for m in shape.modules if m[0] > 400), reverse=True)}; "
              f"functions > 60 lines {sorted((f for f in shape.functions if f[0] > 60), reverse=True)}; "
              f"broad excepts {len(shape.broad_excepts)}")


def main(argv: list[str]) -> None:
    trees = [Path(a).resolve() for a in argv]
    if len(trees) > 2:
        raise SystemExit(__doc__)
    base = measure(trees[0]) if len(trees) == 2 else None
    report(base, measure(trees[-1] if trees else REPO))


if __name__ == "__main__":
    main(sys.argv[1:])

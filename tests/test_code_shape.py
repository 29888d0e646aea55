"""The package's shape rules (issue #43), checked on the syntax tree of every module of gspo_cli:
no module over 400 lines, no function over 60, and no broad `except` (Exception, BaseException, bare) that
swallows what it caught without a word: its body re-raises or uses the caught exception (reports the cause)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "gspo_cli"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
BROAD = {"Exception", "BaseException"}


def _modules() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted(ROOT.rglob("*.py"))]


def long_functions(source: str) -> list[tuple[str, int]]:
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def _broad(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ast.unparse(t) in BROAD for t in types)


def silent_broad_excepts(source: str) -> list[int]:
    """Lines of broad handlers whose body neither raises nor reads the caught exception."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ExceptHandler) and _broad(node):
            body = list(ast.walk(ast.Module(body=node.body, type_ignores=[])))
            raises = any(isinstance(n, ast.Raise) for n in body)
            reads = node.name is not None and any(isinstance(n, ast.Name) and n.id == node.name for n in body)
            if not (raises or reads):
                found.append(node.lineno)
    return found


def test_no_module_over_400_lines():
    long = {name: source.count("\n") for name, source in _modules() if source.count("\n") > MAX_MODULE_LINES}
    assert not long, long


def test_no_function_over_60_lines():
    long = {name: found for name, source in _modules() if (found := long_functions(source))}
    assert not long, long


def test_every_broad_except_reraises_or_reports_its_cause():
    silent = {name: lines for name, source in _modules() if (lines := silent_broad_excepts(source))}
    assert not silent, silent


def test_the_rules_catch_what_they_forbid():
    """Controls: a 61-line function, a silent `except Exception: return None` and a bare `except: pass` are
    caught; a handler that re-raises or names its cause is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    assert long_functions(f"def f():\n{body}\n") == [("f", 61)]
    assert long_functions(f"def f():\n{body[: body.rindex(chr(10))]}\n") == []
    assert silent_broad_excepts("try:\n    f()\nexcept Exception:\n    return None\n") == [3]
    assert silent_broad_excepts("try:\n    f()\nexcept:\n    pass\n") == [3]
    assert silent_broad_excepts("try:\n    f()\nexcept (ValueError, BaseException):\n    x = 1\n") == [3]
    assert silent_broad_excepts("try:\n    f()\nexcept Exception as exc:\n    say(f'{exc}')\n") == []
    assert silent_broad_excepts("try:\n    f()\nexcept BaseException:\n    undo()\n    raise\n") == []
    assert silent_broad_excepts("try:\n    f()\nexcept OSError:\n    return None\n") == []

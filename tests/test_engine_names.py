"""No layer outside `engines/` and `config/` compares engine or device names: those layers ask the engine registry
(gspo_cli/config/engine_registry.py), the engine spec (gspo_cli/engines/spec.py) or the device table
(gspo_cli/config/devices.py), or read the answer from the job file.

The rule, checked on the syntax tree of every module of gspo_cli: no comparison (`==`, `!=`, `in`, `not in`,
`is`, `is not`) with a string literal that is an engine name (the engine registry's: verl, native), a device kind
(npu, cuda, cpu; `auto` where the other side is a device), or a Ray device resource (NPU, GPU). Issue #31 counted 37 such comparisons
(plan/, jobs/, env/, runs/, eval/, models/, rewards/) before the spec; 0 after.
"""

from __future__ import annotations

import ast
from pathlib import Path

from gspo_cli.config.engine_registry import ENGINES

ROOT = Path(__file__).resolve().parents[1] / "gspo_cli"
OWNERS = ("engines", "config")  # the layers that own engine and device names
ENGINE_NAMES = set(ENGINES)
DEVICE_NAMES = {"npu", "cuda", "cpu"}
RESOURCE_NAMES = {"NPU", "GPU"}
NAMES = ENGINE_NAMES | DEVICE_NAMES | RESOURCE_NAMES


def _strings(node: ast.AST):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for element in node.elts:
            yield from _strings(element)


def _about_devices(node: ast.AST, function: str) -> bool:
    return "device" in ast.unparse(node).lower() or "device" in function.lower()


def name_compares(source: str) -> list[tuple[int, str]]:
    """(line, the comparison) for each comparison of `source` with an engine / device / resource name literal."""
    found = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, operand in enumerate(operands):
                others = operands[:i] + operands[i + 1:]
                if any(s in NAMES or (s == "auto" and any(_about_devices(o, function) for o in others))
                       for s in _strings(operand)):
                    found.append((node.lineno, ast.unparse(node)))
                    break
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(source), "")
    return found


def outside_owners() -> dict[str, list[tuple[int, str]]]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in OWNERS:
            continue
        hits = name_compares(path.read_text(encoding="utf-8"))
        if hits:
            out[f"gspo_cli/{rel.as_posix()}"] = hits
    return out


def test_no_engine_or_device_name_is_compared_outside_engines_and_config():
    found = outside_owners()
    listing = "\n".join(f"{f}:{line}: {code}" for f, hits in found.items() for line, code in hits)
    assert not found, f"ask the engine spec or config/devices.py instead of comparing names:\n{listing}"


def test_the_rule_bites_on_the_comparisons_it_replaced():
    """Control: the comparisons this rule removed, as they were written, are caught; look-ups are not."""
    before = '''
def need_of(preset):
    if preset.trainer.engine != "verl":
        return None
    resource = "NPU" if preset.cluster.device == "npu" else "GPU"

def resolve_device(requested):
    if requested == "auto":
        pass
    if target.resource == "GPU" or device in ("cuda", "npu") or w.engine == "native":
        pass
'''
    assert [line for line, _ in name_compares(before)] == [3, 5, 8, 10, 10, 10]
    after = '''
def need_of(preset):
    resource = devices.of(preset).ray_resource
    support = engine_support.of(preset.trainer.engine)
    if dtype == "auto" or backend == "hf":
        pass
'''
    assert name_compares(after) == []

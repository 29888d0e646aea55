"""`python -X importtime`, in CPU seconds: which imports cost what, without the noise of a loaded machine's wall time.

    .venv/bin/python benchmarks/import_cpu.py [--min 0.1] [--depth 6] -c "import verl.utils.config"
    .venv/bin/python benchmarks/import_cpu.py -m gspo_cli train --preset qwen3-32b --dry-run

Wraps the import system's `_find_and_load` (what `import` calls for a module not loaded yet) and charges each
module the `time.process_time` of its import, its own and cumulative (with the modules it imported), nested as
`-X importtime` nests them. Prints, at exit, the modules whose cumulative CPU is at least --min seconds, then the
own CPU per top-level package.
"""

from __future__ import annotations

import _frozen_importlib  # the import system's Python half; `import` calls its _find_and_load
import atexit
import runpy
import sys
import time

ROWS: list[tuple[float, float, int, str]] = []  # (own s, cumulative s, depth, module), in the order they finished
_STACK: list[float] = []  # per import in progress: CPU of the imports it made
_ORIGINAL = _frozen_importlib._find_and_load


def _find_and_load(name, import_):
    if name in sys.modules:
        return _ORIGINAL(name, import_)
    start = time.process_time()
    _STACK.append(0.0)
    try:
        return _ORIGINAL(name, import_)
    finally:
        cumulative = time.process_time() - start
        children = _STACK.pop()
        if _STACK:
            _STACK[-1] += cumulative
        ROWS.append((cumulative - children, cumulative, len(_STACK), name))


def report(minimum: float, depth: int) -> None:
    out = sys.__stderr__
    print(f"\nimport CPU s (cumulative, own), modules >= {minimum} s, depth <= {depth}:", file=out)
    for own, cumulative, level, name in ROWS:  # a module's row follows those of the modules it imported
        if cumulative >= minimum and level <= depth:
            print(f"{cumulative:6.2f} {own:6.2f} {'  ' * level}{name}", file=out)
    packages: dict[str, float] = {}
    for own, _, _, name in ROWS:
        packages[name.split(".")[0]] = packages.get(name.split(".")[0], 0.0) + own
    total = sum(c for _, c, level, _ in ROWS if level == 0)
    print(f"all imports: {total:.2f} s CPU; own CPU by top-level package:", file=out)
    for name, own in sorted(packages.items(), key=lambda kv: -kv[1])[:15]:
        print(f"{own:7.3f} {name}", file=out)


def main() -> None:
    args = sys.argv[1:]
    minimum, depth = 0.1, 6
    while args and args[0] in ("--min", "--depth"):
        if args[0] == "--min":
            minimum = float(args[1])
        else:
            depth = int(args[1])
        args = args[2:]
    if len(args) < 2 or args[0] not in ("-c", "-m"):
        sys.exit(__doc__)
    atexit.register(report, minimum, depth)
    _frozen_importlib._find_and_load = _find_and_load
    if args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()

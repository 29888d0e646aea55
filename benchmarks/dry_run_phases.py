"""CPU and wall seconds per phase of one `gspo train ... --dry-run`, in this process (issue 44's breakdown).

    GSPO_HOME=$(mktemp -d) .venv/bin/python benchmarks/dry_run_phases.py train --preset qwen3-32b --dry-run

Wraps gspo's own functions (preset load, preflight, compile, environment probe, Hydra compose, verl's validators;
names that a tree lacks are skipped) and prints, at exit, `time.process_time` and wall per phase (a phase's
nested calls are counted once), the whole process's user+sys so far and the load average. A fresh $GSPO_HOME makes
it the cold path; run it twice with the same home for the warm one.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import time

TIMES: dict[str, list[float]] = {}  # phase -> [cpu s, wall s, calls]
PHASES = {
    "gspo_cli.config.presets": ("load", "find_source", "validate"),
    "gspo_cli.engines.verl.launch": ("make_plan", "_load_run"),
    "gspo_cli.engines.verl.preflight": ("run",),
    "gspo_cli.engines.verl.compile": ("compile_preset",),
    "gspo_cli.engines.verl.environment": ("probe",),
    "gspo_cli.engines.verl.schema_check": ("check", "compose", "_base", "_check_types",
                                           "_validate_with_verl"),
    "gspo_cli.engines.verl.dryrun": ("render",),
    "gspo_cli.plan": ("dry_run_line",),
}


def _add(name: str, cpu: float, wall: float) -> None:
    row = TIMES.setdefault(name, [0.0, 0.0, 0])
    row[0] += cpu
    row[1] += wall
    row[2] += 1


def _wrap(module_name: str, attr: str) -> None:
    module = importlib.import_module(module_name)
    func = getattr(module, attr, None)
    if func is None:
        return
    name, depth = f"{module_name.rsplit('.', 1)[-1]}.{attr}", [0]

    @functools.wraps(func)
    def timed(*args, **kwargs):
        if depth[0]:
            return func(*args, **kwargs)
        depth[0] += 1
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            depth[0] -= 1
            _add(name, time.process_time() - cpu, time.perf_counter() - wall)

    setattr(module, attr, timed)


def _report() -> None:
    times = os.times()
    print(f"\nload {os.getloadavg()[0]:.2f}; process user+sys so far {times.user + times.system:.2f} s "
          "(children not included)", file=sys.__stderr__)
    for name, (cpu, wall, calls) in TIMES.items():
        print(f"{name:38} cpu {cpu:6.2f} s  wall {wall:6.2f} s  x{calls}", file=sys.__stderr__)


def main() -> None:
    cpu, wall = time.process_time(), time.perf_counter()
    from gspo_cli.cli import main as gspo

    for module_name in PHASES:
        importlib.import_module(module_name)
    _add("import gspo_cli.cli + the verl engine's modules", time.process_time() - cpu, time.perf_counter() - wall)
    for module_name, attrs in PHASES.items():
        for attr in attrs:
            _wrap(module_name, attr)
    try:
        gspo(sys.argv[1:])
    except SystemExit:
        pass
    finally:
        _report()


if __name__ == "__main__":
    main()

"""Wall time of `gspo --help` (and `gspo presets list`) next to the interpreter floor and a peer CLI (`ray --help`).

Run: .venv/bin/python benchmarks/cli_startup.py [--repeat 15]
Prints a table of median / min wall time and, for gspo, which heavy modules were imported (must be none).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
HEAVY = ("torch", "ray", "transformers", "verl", "vllm", "pyarrow", "pandas", "matplotlib", "numpy", "pydantic")

CASES = {
    "python -c pass (floor)": [sys.executable, "-c", "pass"],
    "gspo --help": [str(BIN / "gspo"), "--help"],
    "gspo presets list": [str(BIN / "gspo"), "presets", "list"],
    "ray --help (peer)": [str(BIN / "ray"), "--help"],
}

PROBE = (
    "import sys, json\nfrom gspo_cli.cli import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
    "print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})), file=sys.stderr)"
)


def time_cmd(cmd: list[str], repeat: int) -> list[float]:
    subprocess.run(cmd, capture_output=True)  # warm the page cache
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return times


def heavy_imports(args: list[str]) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True)
    modules = json.loads(proc.stderr.strip().splitlines()[-1])
    return [m for m in HEAVY if m in modules]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    opts = parser.parse_args()
    print("| command | median s | min s | heavy modules imported |\n|---|---|---|---|")
    for name, cmd in CASES.items():
        times = time_cmd(cmd, opts.repeat)
        heavy = ", ".join(heavy_imports(cmd[1:])) or "none" if name.startswith("gspo") else "-"
        print(f"| {name} | {statistics.median(times):.3f} | {min(times):.3f} | {heavy} |")


if __name__ == "__main__":
    main()

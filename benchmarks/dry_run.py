"""Cold and warm `gspo train --preset qwen3-32b --dry-run` side by side, for one or more source trees.

    .venv/bin/python benchmarks/dry_run.py [--repeat 5] [--tree .] [--tree /path/to/other/checkout] [--typo]
                                           [--kinds cold,bytecode,warm]

Every figure is a fresh process until it exits (the verdict is its last line); rows per tree:
- cold: a fresh $GSPO_HOME (no cache of gspo's: verl's validators run), Python's bytecode cache (__pycache__) as
  installed, i.e. warm: what a user's second command after `pip install` sees.
- cold, bytecode cold too: the same with PYTHONPYCACHEPREFIX pointing at an empty folder, so Python compiles every
  module it imports (gspo's, verl's, torch's) from source: a first command right after an install that wrote no
  bytecode.
- warm: the same $GSPO_HOME again (verl's verdict for these overrides cached).
The trees' runs are interleaved, repetition by repetition, so each sees the same load. Columns: wall seconds
(median, min, max), CPU seconds (user+sys of the process and the children it waited for, median), which moves
far less than wall time on a loaded machine, and the 1-minute load average when each run started (median). `--typo` adds the rows of a typo'd `--set` (rejected at compose) and of
`python -m verl.trainer.main_ppo` with the same typo (verl alone), for the first tree. `--kinds cold,warm` leaves
the bytecode-cold rows out (they take 2-4x as long), for more repetitions in the same time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TYPO = "actor_rollout_ref.actor.optim.lrr=2e-6"
DRY = ["train", "--preset", "qwen3-32b", "--dry-run"]


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, str, float]:
    """(wall s, cpu s, exit code, output, load average at the start) of one fresh process."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode, out, load


class Row:
    def __init__(self, name: str):
        self.name, self.wall, self.cpu, self.load, self.rc, self.verdict = name, [], [], [], 0, ""

    def add(self, measured: tuple[float, float, int, str, float], marker: str = "Verdict:") -> None:
        wall, cpu, self.rc, out, load = measured
        print(f"{self.name}: wall {wall:.2f} s, cpu {cpu:.2f} s, exit {self.rc}, load {load:.1f}", file=sys.stderr,
              flush=True)
        self.wall.append(wall)
        self.cpu.append(cpu)
        self.load.append(load)
        self.verdict = _first(out, marker)

    def line(self) -> str:
        w = self.wall
        return (f"| {self.name:58} | {statistics.median(w):6.2f} | {min(w):6.2f} | {max(w):6.2f} | "
                f"{statistics.median(self.cpu):6.2f} | {min(self.cpu):6.2f} | {statistics.median(self.load):5.1f} | "
                f"{self.rc:4} | {self.verdict[:70]} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tree", action="append", help="a gspo source tree (default: this one); repeat to compare")
    ap.add_argument("--typo", action="store_true", help="also time a typo'd --set and verl alone (first tree)")
    ap.add_argument("--kinds", default="cold,bytecode,warm", help="which rows: cold, bytecode, warm (comma list)")
    args = ap.parse_args()
    kinds = set(args.kinds.split(","))
    trees = [Path(t).resolve() for t in (args.tree or [str(REPO)])]
    rows: dict[tuple[Path, str], Row] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = dict(os.environ, COLUMNS="160")
        base.pop("RAY_ADDRESS", None)
        for i in range(args.repeat):
            for n, tree in enumerate(trees):
                env = dict(base, PYTHONPATH=str(tree))
                gspo = [sys.executable, "-m", "gspo_cli"]
                for kind, extra in (("cold", {}), ("cold, bytecode cold too",
                                                   {"PYTHONPYCACHEPREFIX": f"{tmp}/pyc-{n}-{i}"})):
                    if kind.split(",")[-1].split()[0] not in kinds:
                        continue
                    home = f"{tmp}/home-{n}-{i}-{len(extra)}"
                    row = rows.setdefault((tree, kind), Row(f"{_label(tree, trees)}{kind}"))
                    row.add(timed([*gspo, *DRY], dict(env, GSPO_HOME=home, **extra), tree))
                if "warm" not in kinds:
                    continue
                if "cold" not in kinds:  # warm needs the verdict of a cold run in that home
                    timed([*gspo, *DRY], dict(env, GSPO_HOME=f"{tmp}/home-{n}-{i}-0"), tree)
                row = rows.setdefault((tree, "warm"), Row(f"{_label(tree, trees)}warm"))
                row.add(timed([*gspo, *DRY], dict(env, GSPO_HOME=f"{tmp}/home-{n}-{i}-0"), tree))
        if args.typo:
            _typo_rows(trees[0], base, tmp, args.repeat, rows)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; {args.repeat} runs each")
    print(f"| {'what':58} | median | min    | max    | cpu s  | cpu min| load  | exit | verdict |")
    print(f"|{'-' * 60}|-------:|-------:|-------:|-------:|-------:|------:|-----:|---------|")
    for row in rows.values():
        print(row.line())
    return 0


def _typo_rows(tree: Path, base: dict[str, str], tmp: str, repeat: int, rows: dict[tuple[Path, str], Row]) -> None:
    env = dict(base, PYTHONPATH=str(tree), GSPO_HOME=f"{tmp}/home-0-0-0")
    typo = rows.setdefault((tree, "typo"), Row("--set overrides.verl=[...lrr=2e-6] (rejected at compose)"))
    for _ in range(repeat):
        typo.add(timed([sys.executable, "-m", "gspo_cli", *DRY, "--set", f"overrides.verl=[{TYPO}]"], env, tree),
                 "rejected override")
    # verl itself, with exactly the overrides gspo compiled plus the typo.
    sys.path.insert(0, str(tree))
    os.environ["GSPO_HOME"] = env["GSPO_HOME"]
    from gspo_cli.engines.verl import launch

    plan = launch.make_plan("qwen3-32b", [], schema=False)
    vdir = Path(tmp) / "verl-cwd"
    vdir.mkdir()
    verl = rows.setdefault((tree, "verl"), Row("python -m verl.trainer.main_ppo ... typo (verl alone)"))
    for _ in range(repeat):
        verl.add(timed([sys.executable, "-m", "verl.trainer.main_ppo", *plan.compiled.overrides, TYPO],
                       dict(base, HYDRA_FULL_ERROR="0"), vdir), "Could not override")


def _label(tree: Path, trees: list[Path]) -> str:
    return f"[{tree.name}] " if len(trees) > 1 else ""


def _first(out: str, marker: str) -> str:
    for line in out.splitlines():
        if marker in line:
            return " ".join(line.split())
    return "(not found)"


if __name__ == "__main__":
    sys.exit(main())

"""`gspo train --preset P --dry-run --json` of every built-in preset, from two source trees, compared.

    .venv/bin/python benchmarks/dry_run_json_diff.py BASE_TREE [CHANGED_TREE (default: this one)]

Each tree runs with its own fresh $GSPO_HOME (so verl's validators run: no cached verdict). Before comparing, the
fields that differ between any two runs are normalised: the $GSPO_HOME path, the timestamp of a default run name,
the timing fields (`timings_s`, `schema_check.compose_s` / `validate_s`, `environment.seconds`) and the
host's free memory the native memory check quotes. Prints one line
per preset and the unified diff of any that differ; exit 1 when one does.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TIMESTAMP = re.compile(r"-\d{8}-\d{6}")
# the native dry-run's memory check quotes the host's free memory at that moment (engines/native/dryrun.py)
HOST_FREE = re.compile(r"host has \d+\.\d GiB available")


def preset_names(tree: Path) -> list[str]:
    """The built-in presets' names (not aliases), as the tree itself lists them."""
    code = "from gspo_cli.config import presets; print('\\n'.join(s.name for s in presets.builtin_sources()))"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(tree)), cwd=tree,
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def dry_run(tree: Path, home: str, preset: str) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(tree), GSPO_HOME=home, COLUMNS="160")
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run([sys.executable, "-m", "gspo_cli", "train", "--preset", preset, "--dry-run", "--json"],
                          env=env, cwd=tree, capture_output=True, text=True)
    return proc.returncode, proc.stdout


def normalised(text: str, home: str) -> str:
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        return text.replace(home, "<GSPO_HOME>")
    data.pop("timings_s", None)
    for section, keys in (("schema_check", ("compose_s", "validate_s")), ("environment", ("seconds",))):
        if isinstance(data.get(section), dict):
            for key in keys:
                data[section].pop(key, None)
    out = json.dumps(data, indent=1, sort_keys=True).replace(home, "<GSPO_HOME>")
    return HOST_FREE.sub("host has <N> GiB available", TIMESTAMP.sub("-<TIMESTAMP>", out))


def main() -> int:
    base = Path(sys.argv[1]).resolve()
    change = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else REPO
    names = preset_names(base)
    if names != preset_names(change):
        print(f"the trees list different built-in presets: {names} vs {preset_names(change)}")
        return 1
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        homes = {tree: f"{tmp}/home-{i}" for i, tree in enumerate((base, change))}
        for name in names:
            runs = {tree: dry_run(tree, homes[tree], name) for tree in (base, change)}
            texts = [f"exit {rc}\n{normalised(out, homes[tree])}" for tree, (rc, out) in runs.items()]
            same = texts[0] == texts[1]
            differ += not same
            print(f"{name}: exit {runs[base][0]} / {runs[change][0]}, {len(runs[base][1])} bytes of JSON: "
                  f"{'identical' if same else 'DIFFERENT'}", flush=True)
            if not same:
                sys.stdout.writelines(difflib.unified_diff(texts[0].splitlines(True), texts[1].splitlines(True),
                                                           str(base), str(change)))
    print(f"{len(names)} presets, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

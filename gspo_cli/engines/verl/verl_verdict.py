"""Stage 2 of the verl schema check (verl's own validators) in a process of its own, started early.

Importing verl for its validators is most of a cold dry-run (verl -> tensordict -> torch._dynamo, transformers, ray:
~5 s of ~7 s on 2 cores, no cheap import path). `start` launches the child as soon as the overrides are compiled,
so the import runs beside what the parent still does (the environment probe, Hydra compose + type check of stage 1);
`Pending.result` collects the verdict. The child composes the same overrides the same way (`schema_check.compose`),
refuses any `_target_` verl's config does not name before building anything, runs `_validate_with_verl` and prints
one JSON line. Its garbage collector is off while it imports (the import allocates millions of objects and frees
none; ~15% of its CPU time). The parent never imports verl, so verl's import-time side effects (logging config,
environment defaults) stay out of the gspo process, warm or cold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MARK = "@@verdict "


class Pending:
    """A running child; `result()` once, or `cancel()`."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.proc = proc

    def result(self) -> tuple[bool, str]:
        """(True, what verl's validators printed) or (False, verl's error message)."""
        out, err = self.proc.communicate()
        for line in reversed(out.splitlines()):
            if line.startswith(MARK):
                answer = json.loads(line[len(MARK):])
                return bool(answer["ok"]), str(answer["text"])
        tail = " ".join((err or out).strip().splitlines()[-3:])
        return False, f"verl's validators did not run (exit {self.proc.returncode}): {tail or 'no output'}"

    def cancel(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def start(overrides: list[str]) -> Pending:
    """Start verl's validators on `overrides` in a child of this interpreter (the one whose verl the check judges)."""
    root = str(Path(__file__).resolve().parents[3])  # so the child imports this gspo_cli, wherever it is run from
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p))
    proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"overrides": list(overrides)}))
    proc.stdin.close()
    proc.stdin = None  # communicate() must not flush it again
    return Pending(proc)


def _verdict(overrides: list[str]) -> dict[str, object]:
    import gc
    import warnings

    from gspo_cli.engines.verl import schema_check

    try:
        cfg = schema_check.compose(overrides)
    except Exception as exc:  # noqa: BLE001 - stage 1 in the parent names it; nothing is built here
        return {"ok": False, "text": f"compose: {schema_check._hydra_message(exc)}"}
    if foreign := schema_check.foreign_targets(cfg):
        return {"ok": False, "text": f"refused to build {foreign}: not a class verl's config names"}
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import verl.trainer.ppo.utils  # noqa: F401 - the slow import, with the collector off
            import verl.utils.config  # noqa: F401
        gc.enable()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {"ok": True, "text": schema_check._validate_with_verl(cfg)}
    except Exception as exc:  # noqa: BLE001 - verl uses assert, ValueError and Hydra instantiation errors
        return {"ok": False, "text": schema_check._hydra_message(exc)}
    finally:
        gc.enable()


def main() -> int:
    request = json.loads(sys.stdin.read())
    answer = _verdict([str(o) for o in request["overrides"]])
    sys.stdout.write(MARK + json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Job entrypoint of `gspo eval` (`python -m gspo_cli.jobs.entry eval ARGS...`): argv <-> EvalRequest, run, report.

The CLI turns its flags into an EvalRequest and then into argv with `to_argv`; the job parses them back with
`from_argv`, so a Ray job and a --local run execute the same request.
"""

from __future__ import annotations

import argparse
from dataclasses import fields, replace
from pathlib import Path

from gspo_cli.eval.service import EvalRequest

_LISTS = {"sets": "--set", "k": "--k"}


def _absolute(value: str | None, *, must_exist: bool = False) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    if must_exist and not path.exists():
        return value  # not a path: a run name, `latest`, `builtin:tiny`, a preset name
    return str(path.resolve())


def to_argv(req: EvalRequest) -> list[str]:
    """The job's argv. Paths go absolute: a Ray job runs in another working directory than the CLI."""
    req = replace(req, model=_absolute(req.model, must_exist=True), preset=_absolute(req.preset, must_exist=True),
                  data=_absolute(req.data), out=_absolute(req.out))
    argv = [req.benchmark]
    for f in fields(EvalRequest):
        if f.name == "benchmark":
            continue
        value = getattr(req, f.name)
        if value is None or value == [] or (f.name == "sets" and not value):
            continue
        flag = "--" + f.name.replace("_", "-")
        if f.name == "sets":
            for item in value:
                argv += ["--set", item]
        elif f.name == "k":
            argv += ["--k", ",".join(str(k) for k in value)]
        elif isinstance(value, bool):
            argv += [flag if value else "--no-" + f.name.replace("_", "-")]
        else:
            argv += [flag, str(value)]
    return argv


def _k_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k takes comma-separated integers, got {text!r}") from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gspo_cli.jobs.entry eval")
    p.add_argument("benchmark")
    p.add_argument("--model", default="latest")
    p.add_argument("--preset")
    p.add_argument("--set", dest="sets", action="append", default=[])
    p.add_argument("--n", type=int)
    p.add_argument("--k", type=_k_list)
    p.add_argument("--temperature", type=float)
    p.add_argument("--top-p", type=float)
    p.add_argument("--top-k", type=int)
    p.add_argument("--max-tokens", type=int)
    p.add_argument("--prompt-style")
    p.add_argument("--enable-thinking", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--data")
    p.add_argument("--backend")
    p.add_argument("--device")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--tp", type=int)
    p.add_argument("--limit", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    p.add_argument("--score-workers", type=int)
    return p


def from_argv(argv: list[str]) -> EvalRequest:
    return EvalRequest(**vars(parser().parse_args(argv)))


def main(argv: list[str]) -> int:
    from gspo_cli.eval.service import run_evals
    from gspo_cli.jobs import events

    results = run_evals(from_argv(argv))
    # the event travels through the job log: keep it small; results.json on disk has everything
    trimmed = [{k: v for k, v in r.items() if k not in ("per_problem", "definitions")} for r in results]
    events.result(trimmed[0] if len(trimmed) == 1 else {"evals": trimmed})
    return 0

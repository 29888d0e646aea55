"""Job entrypoint of `gspo eval`: `python -m gspo_cli.job_kinds eval REQUEST.json`.

The CLI writes the request (eval/request.py); the job reads it, evaluates every checkpoint it names and reports
a trimmed result event (results.json on disk has everything).
"""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from gspo_cli.eval.request import JOB_COMMAND, request_from
    from gspo_cli.eval.service import run_evals
    from gspo_cli.jobs import events
    from gspo_cli.jobs import request as job_request

    results = run_evals(request_from(job_request.read(argv, JOB_COMMAND)))
    # the event travels through the job log: keep it small; results.json on disk has everything
    trimmed = [{k: v for k, v in r.items() if k not in ("per_problem", "definitions")} for r in results]
    events.result(trimmed[0] if len(trimmed) == 1 else {"evals": trimmed})
    return 0

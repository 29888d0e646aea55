"""Ray job layer (being written by the lead): address resolution, embedded local head, submit/follow/list/stop.

Public API other modules use:
    run_job(command, entry_args, *, preset=None, address=None, local=False, json_out=False, follow=True) -> int
        Run `python -m gspo_cli.jobs_entry COMMAND ENTRY_ARGS...` as a Ray job on the resolved cluster (or
        in-process when local=True), render its progress events, return its exit code.
"""

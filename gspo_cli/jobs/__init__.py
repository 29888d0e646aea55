"""The Ray job layer: cluster address and auth, the embedded loopback head, submit / follow / stop, the job
entrypoint machinery (`jobs/entry.py`; the kinds: `python -m gspo_cli.job_kinds`), progress events and their rendering, process groups gspo started."""

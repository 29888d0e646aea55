"""The Ray job layer: cluster address and auth, the embedded loopback head, submit / follow / stop, the job
entrypoint (`python -m gspo_cli.jobs.entry`), progress events and their rendering, process groups gspo started."""

"""Runs under $GSPO_HOME/runs: model references (`refs`), what each run holds and its status (`catalog`),
the status file a training job keeps (`state`)."""

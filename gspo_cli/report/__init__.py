"""`gspo report`: charts (PNG) and summary.md from the metrics of one or several runs."""

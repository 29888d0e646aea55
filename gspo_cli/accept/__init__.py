"""`gspo accept`: run the upstream nightly job that matches a cluster and judge it against upstream's baseline.

`rules` (pure: the window, the tolerances, the verdicts), `hints` (what to look at when a metric fails),
`baselines` (baseline files: the shipped upstream ones with their provenance, recorded ones, upstream's own
`key:value` text), `service` (run or read a run, compare, record), `view` (the table).
"""

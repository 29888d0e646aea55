"""Ray's Prometheus exporters, which take no token, switched off on the heads and nodes gspo starts.

Three exporters answer plain HTTP without auth: the per-node metrics agent (`RAY_enable_metrics_collection`), and on
a head the autoscaler's (port 44217) and the dashboard's (44227). On a head whose node IP is not loopback the last
two bind every interface, and Ray 2.60 has no switch for them: it reads their ports from `AUTOSCALER_METRIC_PORT`
and `DASHBOARD_METRIC_PORT` and, when the bind fails, logs the error and runs on without the exporter. gspo hands
them a port no socket can bind, so neither listens. `--metrics` (`gspo cluster up/join`) turns all three back on;
a port the user set in their own environment is theirs and kept.
"""

from __future__ import annotations

# Out of range for bind(): Ray's exporter start raises OverflowError, which Ray catches and logs (monitor.err,
# dashboard.log: "An exception occurred while starting the metrics server").
UNBINDABLE_PORT = "65536"
HEAD_EXPORTER_PORTS = ("AUTOSCALER_METRIC_PORT", "DASHBOARD_METRIC_PORT")


def apply(env: dict[str, str], *, metrics: bool = False, user_env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` for a `ray start` with the unauthenticated exporters off (`metrics=False`) or left on; a new dict.
    `user_env`: the environment the user gave gspo (a port named there is kept)."""
    out = dict(env)
    out["RAY_enable_metrics_collection"] = "1" if metrics else "0"
    for name in HEAD_EXPORTER_PORTS:
        if metrics or (user_env or {}).get(name):
            continue
        out[name] = UNBINDABLE_PORT
    return out

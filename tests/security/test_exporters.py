"""Ray's unauthenticated Prometheus exporters are off in every `ray start` gspo plans, unless asked for."""

from __future__ import annotations

import socket

import pytest

from gspo_cli.jobs import exporters


def test_off_by_default_on_at_request_and_a_users_own_port_kept():
    off = exporters.apply({"PATH": "/bin"})
    assert off == {"PATH": "/bin", "RAY_enable_metrics_collection": "0",
                   "AUTOSCALER_METRIC_PORT": exporters.UNBINDABLE_PORT,
                   "DASHBOARD_METRIC_PORT": exporters.UNBINDABLE_PORT}
    on = exporters.apply({"PATH": "/bin"}, metrics=True)
    assert on == {"PATH": "/bin", "RAY_enable_metrics_collection": "1"}
    mine = exporters.apply({"AUTOSCALER_METRIC_PORT": "9100"}, user_env={"AUTOSCALER_METRIC_PORT": "9100"})
    assert mine["AUTOSCALER_METRIC_PORT"] == "9100" and mine["DASHBOARD_METRIC_PORT"] == exporters.UNBINDABLE_PORT


def test_the_port_given_cannot_be_bound_on_any_address():
    """What makes the switch work: Ray's exporter start fails at bind() and Ray runs on without it."""
    for addr in ("", "127.0.0.1"):
        with socket.socket() as s, pytest.raises(OverflowError):
            s.bind((addr, int(exporters.UNBINDABLE_PORT)))


"""The node probe's own IP (env/cluster.py `_node_ip`): Ray's answer; None only when the socket it asks fails
(the node table's address stands in); any other error is not swallowed (the probe task fails and says why)."""

from __future__ import annotations

import pytest

from gspo_cli.env import cluster


def test_node_ip_is_none_on_a_socket_error_only(monkeypatch):
    import ray

    assert isinstance(cluster._node_ip(), str)  # control: no Ray running here, Ray asks the host's socket

    def unroutable(address=None):
        raise OSError(101, "Network is unreachable")

    monkeypatch.setattr(ray.util, "get_node_ip_address", unroutable)
    assert cluster._node_ip() is None

    def broken(address=None):
        raise RuntimeError("a bug")

    monkeypatch.setattr(ray.util, "get_node_ip_address", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        cluster._node_ip()

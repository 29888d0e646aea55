"""The token policy of `gspo cluster up` / `join` (env/node_start.py), without starting Ray: `up` makes or reuses
this home's token; `join` takes the joined head's token and never hands this home's token to another head."""

from __future__ import annotations

import pytest

from gspo_cli.env.node_start import NodeArgs, node_token
from gspo_cli.errors import ClusterError
from gspo_cli.jobs import auth, nodes


def _args(role: str, head: str | None = None, **kw) -> NodeArgs:
    return NodeArgs(role, "tiny", head, 6379, 8265, None, None, None, None, 0, None, **kw)


@pytest.fixture(autouse=True)
def _no_token_in_env(monkeypatch):
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)


def _recorded_cluster(address: str, token_file, auth_mode: str = "token") -> None:
    nodes.write_cluster(nodes.ClusterRecord(address=address, dashboard_url="http://10.0.0.1:8265", auth=auth_mode,
                                            token_file=str(token_file) if token_file else None, head="h",
                                            started_at=0.0))


def test_up_makes_the_token_once_then_reuses_it_and_no_auth_has_none():
    first = node_token(_args("head"))
    assert first.made and first.path == auth.cluster_token_file() and auth.read_token(first.path)
    again = node_token(_args("head"))
    assert again == type(first)(first.path, made=False)
    assert node_token(_args("head", auth=False)).path is None


def test_join_of_the_recorded_cluster_gets_its_token():
    path, _ = auth.ensure_cluster_token()
    _recorded_cluster("10.0.0.1:6379", path)
    assert node_token(_args("worker", "10.0.0.1:6379")).path == path


def test_join_of_another_head_is_refused_this_homes_token(tmp_path):
    path, _ = auth.ensure_cluster_token()
    _recorded_cluster("10.0.0.1:6379", path)
    with pytest.raises(ClusterError) as exc:
        node_token(_args("worker", "10.9.9.9:6379"))
    assert "10.9.9.9:6379 is not the cluster recorded in this $GSPO_HOME (that one is 10.0.0.1:6379)" in str(exc.value)
    assert "--token-file" in exc.value.hint
    theirs = auth.write_new_token(tmp_path / "their_token")
    assert node_token(_args("worker", "10.9.9.9:6379", token_file=str(theirs))).path == theirs


def test_join_of_a_recorded_no_auth_cluster_needs_no_token():
    _recorded_cluster("10.0.0.1:6379", None, auth_mode=auth.DISABLED)
    assert node_token(_args("worker", "10.0.0.1:6379")).path is None

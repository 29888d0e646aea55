"""Ray's local-only mode (gspo_cli/jobs/loopback.py), the drain switch of a node gspo stops (procs.no_drain_env),
and what the embedded head's `ray start` gets of both; no Ray started here (the real heads: tests/test_jobs.py,
tests/test_embedded_head_auth.py, tests/env/test_node_resources.py)."""

from __future__ import annotations

import subprocess

from gspo_cli.jobs import local_head, loopback, procs
from gspo_cli.jobs.resources import NodeResources


def test_switching_this_process_into_local_only_and_back_restores_the_users_value(monkeypatch):
    from ray._private import ray_constants

    monkeypatch.setenv(loopback.SWITCH, "1")  # the user's own value
    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", True)
    loopback.use_in_process(True)
    assert ray_constants.ENABLE_RAY_CLUSTER is False  # Ray read the switch at import: told again
    import os

    from ray._private.services import get_node_ip_address

    assert os.environ[loopback.SWITCH] == "0" and get_node_ip_address() == "127.0.0.1"
    loopback.use_in_process(True)  # twice: the user's value is still the one restored
    loopback.use_in_process(False)
    assert os.environ[loopback.SWITCH] == "1" and ray_constants.ENABLE_RAY_CLUSTER is True
    loopback.use_in_process(False)  # not switched: nothing changes
    assert os.environ[loopback.SWITCH] == "1"


def test_an_unset_switch_is_unset_again(monkeypatch):
    import os

    monkeypatch.delenv(loopback.SWITCH, raising=False)
    loopback.use_in_process(True)
    loopback.use_in_process(False)
    assert loopback.SWITCH not in os.environ


def test_the_drain_is_off_unless_the_user_set_it():
    assert procs.no_drain_env({"A": "1"})[procs.DRAIN_VAR] == "0"
    assert procs.no_drain_env({}, {procs.DRAIN_VAR: "12"})[procs.DRAIN_VAR] == "12"


def test_the_embedded_heads_ray_start_runs_local_only_without_drain(monkeypatch, tmp_path):
    """What `_launch` hands `ray start`: the environment (read back from the Popen call) and the record."""
    seen = {}

    class Started:
        pid = 4242

    def popen(cmd, **kwargs):
        seen.update(cmd=cmd, env=kwargs["env"])
        return Started()

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(procs, "identity", lambda pid: None)
    monkeypatch.setenv(procs.DRAIN_VAR, "")  # set but empty: not a value, the drain stays off
    token = tmp_path / "token"
    token.write_text("t")
    _, record, _ = local_head._launch(tmp_path / "ray", tmp_path / "head.log", token, None, NodeResources())
    assert seen["env"][loopback.SWITCH] == "0" and seen["env"][procs.DRAIN_VAR] == "0"
    assert "--node-ip-address=127.0.0.1" in seen["cmd"] and record.local_only is True
    assert record.address.startswith("127.0.0.1:")


def test_a_record_of_an_older_gspo_reads_as_not_local_only(gspo_home):
    import json

    from gspo_cli import layout

    layout.ray_dir().mkdir(parents=True)
    local_head.head_file().write_text(json.dumps({"address": "127.0.0.1:1", "dashboard_url": "http://127.0.0.1:2",
                                                  "pid": 1, "temp_dir": "/x", "log_file": "/y", "started_at": 0}))
    assert local_head.read_record().local_only is False

"""Hostile inputs and refused credentials end in one clear line: `gspo score` on deep JSON, doctor with a bad token."""

from __future__ import annotations

import time

import pytest

from gspo_cli.jobs import nodes

pytestmark = pytest.mark.security


@pytest.mark.parametrize("line", [
    "[" * 100_000 + "]" * 100_000,
    '{"response": ' + "[" * 50_000 + "]" * 50_000 + ', "ground_truth": "1"}',
    '{"response": {"a": ' * 20_000 + "1" + "}" * 20_000 + "}",
], ids=["deep-array", "deep-response", "deep-object"])
def test_score_on_deeply_nested_json_is_one_line(tmp_path, gspo_at, line):
    f = tmp_path / "deep.jsonl"
    f.write_text(line + "\n")
    proc = gspo_at("score", str(f))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert "deep.jsonl:1: JSON nested too deeply" in proc.stderr, proc.stderr


def test_score_on_binary_garbage_is_one_line(tmp_path, gspo_at):
    f = tmp_path / "junk.jsonl"
    f.write_bytes(b"\xff\xfe\x00garbage\n")
    proc = gspo_at("score", str(f))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "junk.jsonl:1" in proc.stderr


@pytest.mark.ray
def test_doctor_cluster_with_a_refused_token_says_so_at_once(ray_head, gspo_home, tmp_path, gspo_at):
    """The home's record of the cluster names a token file whose token is wrong (e.g. rotated on the head)."""
    wrong = tmp_path / "old_token"
    wrong.write_text("a-rotated-token")
    nodes.write_cluster(nodes.ClusterRecord(address=ray_head.address, dashboard_url=ray_head.dashboard_url,
                                            auth="token", token_file=str(wrong), head="h", started_at=time.time()))
    env = {"RAY_AUTH_MODE": "", "RAY_AUTH_TOKEN_PATH": "", "RAY_AUTH_TOKEN": ""}
    proc = gspo_at("env", "doctor", "--cluster", "--address", ray_head.address, env=env)
    assert proc.returncode != 0
    assert f"requires a token: the token in {wrong} was refused" in proc.stderr, proc.stderr
    assert "gcs_client" not in proc.stderr and "Traceback" not in proc.stderr

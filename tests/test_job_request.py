"""Every job gets its request the same way: one JSON file, its path the job's only argument."""

from __future__ import annotations

import json

import pytest

from gspo_cli.errors import ConfigError
from gspo_cli.jobs import request


def test_a_dict_request_becomes_one_file_the_job_reads_back(gspo_home):
    args = request.entry_args_for("prepare-data", {"preset": "tiny", "sets": ["data.language=en"]})
    assert len(args) == 1 and args[0].startswith(str(gspo_home / "jobs" / "prepare-data-"))
    assert request.read(args, "prepare-data") == {"command": "prepare-data", "preset": "tiny",
                                                  "sets": ["data.language=en"]}
    assert request.entry_args_for("cluster-smoke", None) == []
    assert request.entry_args_for("verl-train", gspo_home / "x.json") == [str(gspo_home / "x.json")]


def test_a_wrong_or_missing_request_is_refused(gspo_home, tmp_path, capsys):
    path = request.write("verl-export", {"actor": "a", "out": "b"}, tmp_path / "r.json")
    with pytest.raises(ConfigError, match="not a prepare-data job request"):
        request.read([str(path)], "prepare-data")
    with pytest.raises(ConfigError, match="cannot read the train job request"):
        request.read([str(tmp_path / "absent.json")], "train")
    with pytest.raises(SystemExit) as exit_info:
        request.read(["--preset", "tiny"], "prepare-data")  # the old argv form
    assert exit_info.value.code == 2 and "REQUEST.json" in capsys.readouterr().err
    assert json.loads(path.read_text())["command"] == "verl-export"

"""metrics.jsonl: the one reader/writer (verl file-logger format) shared by both engines, report and job wrapper."""

from __future__ import annotations

import json

from gspo_cli.metrics import jsonl


def test_parse_line_takes_records_and_refuses_torn_or_foreign_lines():
    assert jsonl.parse_line('{"step": "3", "data": {"a": 1}}\n') == {"step": 3, "data": {"a": 1}}
    for bad in ("", "  ", '{"step": 3, "data": {"a"', '{"data": {}}', '{"step": 1}', '{"step": 1, "data": [1]}',
                "[1, 2]", '{"step": "x", "data": {}}'):
        assert jsonl.parse_line(bad) is None, bad


def test_tail_hands_out_each_complete_line_once_and_rereads_a_reopened_file(tmp_path):
    path = tmp_path / "metrics.jsonl"
    tail = jsonl.Tail(path)
    assert tail.poll() == []  # not written yet
    jsonl.append_step(path, 1, {"a": 1.0})
    with open(path, "a") as fh:
        fh.write('{"step": 2, "data": {"a": 2.0}')  # still being written
    assert [r["step"] for r in tail.poll()] == [1]
    with open(path, "a") as fh:
        fh.write("}\n")
    assert [r["step"] for r in tail.poll()] == [2]
    assert tail.poll() == []
    path.write_text(json.dumps({"step": 7, "data": {}}) + "\n")  # reopened with "wb": shorter than before
    assert [r["step"] for r in tail.poll()] == [7]


def test_append_then_truncate_then_series(tmp_path):
    path = tmp_path / "run" / "metrics.jsonl"
    writer = jsonl.MetricsWriter(path)
    for step in (1, 2, 3):
        writer.log(step, {"a": float(step), "flag": True, "nan": float("nan")})
    writer.log(2, {"a": 20.0})  # a resumed step: replaces the first line of step 2 whole
    assert jsonl.read_series(path) == {"a": [(1, 1.0), (2, 20.0), (3, 3.0)]}
    assert jsonl.truncate_after(path, 1) == 3
    assert [r["step"] for r in jsonl.read_metrics(path)] == [1]
    assert jsonl.read_series(tmp_path / "absent.jsonl") == {}

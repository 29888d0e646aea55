"""metrics.jsonl: the one reader/writer (verl file-logger format) shared by both engines, report and job wrapper."""

from __future__ import annotations

import json

import pytest

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
    with path.open("a") as fh:  # a step logged again (e.g. verl's own logger after a resume): the last line wins
        fh.write(json.dumps({"step": 2, "data": {"a": 20.0}}) + "\n")
    assert jsonl.read_series(path) == {"a": [(1, 1.0), (2, 20.0), (3, 3.0)]}
    assert jsonl.truncate_after(path, 1) == 3
    assert [r["step"] for r in jsonl.read_metrics(path)] == [1]
    assert jsonl.read_series(tmp_path / "absent.jsonl") == {}


def test_writer_refuses_a_step_not_after_the_last_one(tmp_path):
    """One writer per run: a second writer (or a resume that did not truncate) cannot interleave its steps."""
    path = tmp_path / "metrics.jsonl"
    writer = jsonl.MetricsWriter(path)
    writer.log(0, {"val": 1.0})
    writer.log(1, {"a": 1.0})
    other = jsonl.MetricsWriter(path)  # another process's writer on the same file
    for step in (0, 1):
        with pytest.raises(jsonl.MetricsOrderError, match=f"refusing to log step {step} after step 1"):
            other.log(step, {"a": 2.0})
    with path.open("a") as fh:
        fh.write('{"step": 9, "data": {"a"')  # a torn last line (killed mid-write) does not count
    writer.log(2, {"a": 2.0})
    assert [r["step"] for r in jsonl.read_metrics(path)] == [0, 1, 2]
    assert jsonl.truncate_after(path, 0) == 3  # a resume from step 0's checkpoint: step 1 may be logged again
    writer.log(1, {"a": 3.0})
    assert jsonl.last_step(path) == 1 and jsonl.last_step(tmp_path / "absent.jsonl") is None


def test_last_step_reads_past_a_long_tail(tmp_path):
    path = tmp_path / "metrics.jsonl"
    jsonl.append_step(path, 5, {"big": "x" * 200_000})  # a line longer than the first read from the end
    assert jsonl.last_step(path) == 5


def test_order_problems_names_duplicated_and_out_of_order_steps(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": s, "data": {}}) + "\n" for s in (1, 2, 3, 2, 3, 4, 1, 6, 5)))
    problems = jsonl.order_problems(path)
    assert problems == {"duplicated": [2, 3, 1], "out_of_order": [5]}
    assert jsonl.describe_order_problems(problems) == "3 duplicated step(s) (first 2), 1 out-of-order step(s) " \
                                                      "(first 5)"
    healthy = tmp_path / "ok.jsonl"
    for s in (0, 1, 2):
        jsonl.append_step(healthy, s, {})
    assert jsonl.describe_order_problems(jsonl.order_problems(healthy)) is None

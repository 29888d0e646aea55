"""The pure arith generator: verl row schema, correct answers, determinism, and argument checks."""

from __future__ import annotations

import operator

import pytest

from gspo_cli.data.arith import format_question, make_arith_rows

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}


def test_rows_follow_the_verl_schema_and_answers_are_right():
    rows = make_arith_rows("train", 300, max_operand=12, ops=["+", "-", "*"], seed=3, prompt_style="plain")
    assert len(rows) == 300
    seen_ops = set()
    for i, row in enumerate(rows):
        assert set(row) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
        assert row["data_source"] == "arith"
        assert row["prompt"] == [{"role": "user", "content": row["extra_info"]["question"] + "="}]
        assert row["reward_model"]["style"] == "rule"
        assert row["extra_info"]["index"] == i and row["extra_info"]["split"] == "train"
        q = row["extra_info"]["question"]
        op = next(o for o in "+-*" if o in q[1:])  # q[0] is a digit, never a sign
        a, b = q.split(op, 1)
        assert 0 <= int(a) <= 12 and 0 <= int(b) <= 12
        assert row["reward_model"]["ground_truth"] == str(OPS[op](int(a), int(b)))
        seen_ops.add(op)
    assert seen_ops == {"+", "-", "*"}


def test_same_arguments_same_rows_and_splits_differ():
    a = make_arith_rows("train", 50, 9, ["+"], seed=0)
    assert a == make_arith_rows("train", 50, 9, ["+"], seed=0)
    assert a != make_arith_rows("val", 50, 9, ["+"], seed=0)
    assert a != make_arith_rows("train", 50, 9, ["+"], seed=1)
    # a prefix of a longer draw is the shorter draw: sizes can change without reshuffling
    assert make_arith_rows("train", 80, 9, ["+"], seed=0)[:50] == a


def test_covers_the_problem_space():
    rows = make_arith_rows("train", 2000, 4, ["+"], seed=0)
    assert {r["extra_info"]["question"] for r in rows} == {f"{a}+{b}" for a in range(5) for b in range(5)}


@pytest.mark.parametrize("style, needle", [("plain", "7+8="), ("dapo", "Answer:"), ("boxed", "\\boxed{}")])
def test_prompt_styles(style, needle):
    assert needle in format_question("7+8", style)
    rows = make_arith_rows("val", 3, 9, ["+"], seed=0, prompt_style=style)
    assert all(needle in r["prompt"][0]["content"] or style == "plain" for r in rows)


@pytest.mark.parametrize(
    "kwargs", [dict(size=-1), dict(max_operand=-2), dict(ops=[]), dict(ops=["/"]), dict(prompt_style="fancy")]
)
def test_bad_arguments(kwargs):
    args = dict(split="train", size=5, max_operand=9, ops=["+"], seed=0, prompt_style="plain")
    args.update(kwargs)
    with pytest.raises(ValueError):
        make_arith_rows(**args)


def test_the_arith_reward_accepts_the_ground_truth():
    from gspo_cli.rewards import compute_score

    for row in make_arith_rows("train", 20, 9, ["+", "-", "*"], seed=5):
        gt = row["reward_model"]["ground_truth"]
        assert compute_score("arith", gt, gt, row["extra_info"])["score"] == 1.0
        assert compute_score("arith", str(int(gt) + 1), gt, row["extra_info"])["score"] == -1.0

"""Pure pieces of prepare-data: prompt wrappers, answer checks, and the streaming dedup's counts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gspo_cli.data.answers import integer_answer
from gspo_cli.data.dedup import Collector
from gspo_cli.data.prompts import DAPO_PREFIX, DAPO_SUFFIX, format_prompt, strip_wrapper
from gspo_cli.errors import DataError

# The published DAPO-Math-17k prompt, byte for byte (as in the dataset's rows).
REAL_DAPO_PROMPT = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n"
    "In triangle $ABC$, $\\sin \\angle A = \\frac{4}{5}$ and $\\angle A < 90^\\circ$. Find $a + b + c$.\n\n"
    'Remember to put your answer on its own line after "Answer:".'
)


def test_dapo_wrapper_matches_the_published_prompt():
    problem = "In triangle $ABC$, $\\sin \\angle A = \\frac{4}{5}$ and $\\angle A < 90^\\circ$. Find $a + b + c$."
    assert format_prompt(problem, "dapo") == REAL_DAPO_PROMPT
    assert strip_wrapper(REAL_DAPO_PROMPT) == problem


@given(st.text(min_size=1).filter(lambda s: s.strip() == s and s))
def test_every_style_round_trips(problem):
    for style in ("dapo", "boxed", "plain"):
        assert strip_wrapper(format_prompt(problem, style)) == problem


def test_unknown_style_is_an_error():
    with pytest.raises(ValueError, match="unknown prompt style"):
        format_prompt("x", "chatml")


@pytest.mark.parametrize(
    "value, expected",
    [("42", "42"), (" 033 ", "33"), (7, "7"), (7.0, "7"), ("-5", "-5"), ("$33$", "33"), ("\\boxed{12}", "12"),
     ("1,000", "1000"), ("\\frac{1}{2}", None), ("x+1", None), ("", None), ("  ", None), (None, None),
     (7.5, None), (True, None), (["1"], None)],
)
def test_integer_answer(value, expected):
    assert integer_answer(value) == expected


def test_an_answer_the_verifier_cannot_read_is_no_integer_and_a_bug_in_it_is_not_hidden(monkeypatch):
    import importlib

    normalize = importlib.import_module("gspo_cli.rewards.normalize")  # the module (the package exports the function)
    unreadable = "9" * 50 + "1/00" + "9" * 50 + "^106"  # the verifier's value passes int's 4300-digit limit
    with pytest.raises(ValueError, match="4300 digits"):
        normalize.normalize(unreadable)
    assert integer_answer(unreadable) is None  # an expected failure: not an integer, as before
    assert integer_answer("$" + "9" * 40 + "$") == "9" * 40  # control: a readable one through the same path

    def broken(text):
        raise TypeError("a bug in the verifier")

    monkeypatch.setattr(normalize, "normalize", broken)
    with pytest.raises(TypeError, match="a bug in the verifier"):  # no longer swallowed into "not an integer"
        integer_answer("$33$")


def _rows(*pairs):
    return [p for p, _ in pairs], [a for _, a in pairs]


def test_collector_counts_across_batches():
    wrapped = format_prompt("P1", "dapo")
    c = Collector()
    c.add(*_rows((wrapped, "1"), ("P2", "2"), (wrapped, "1")))
    c.add(*_rows(("P1", "01"), ("P2", "3"), (None, "1"), ("P3", "oops"), ("P4", None)))
    res = c.finish()
    assert res.rows_in == 8
    assert res.rejected == {"empty problem": 1, "ground truth is not an integer": 1, "missing ground truth": 1}
    # P1 appears wrapped and bare with answers 1 and 01 (the same integer): no conflict. P2 has 2 and 3.
    assert res.unique_problems == 2
    assert res.duplicates == 3
    assert res.conflicts["problems"] == 1 and res.conflicts["rows"] == 2
    assert [(p.problem, p.answer) for p in res.kept] == [("P1", "1")]


def test_conflict_policies():
    pairs = [("A", "1"), ("B", "2"), ("A", "9"), ("A", "1")]
    for policy, expected in (("drop", [("B", "2")]), ("keep-first", [("A", "1"), ("B", "2")])):
        c = Collector()
        c.add(*_rows(*pairs))
        res = c.finish(conflict_policy=policy)
        assert [(p.problem, p.answer) for p in res.kept] == expected
        assert res.conflicts == {"policy": policy, "problems": 1, "rows": 3,
                                 "examples": [{"problem": "A", "answers": ["1", "9"]}]}
    c = Collector()
    c.add(*_rows(*pairs))
    with pytest.raises(DataError, match="conflicting answers") as exc:
        c.finish(conflict_policy="error")
    assert "conflict_policy" in exc.value.hint


def test_language_filter_and_no_dedup():
    c = Collector(keep_rows=True)
    c.add(*_rows(("English one", "1"), ("中文题目", "2"), ("English one", "1"), ("日本語の問題", "3"),
                 ("한국어 문제", "4"), ("Ünïcödé but Latin", "5")))
    res = c.finish(dedup=False, language="en")
    assert res.language == {"filter": "en", "problems": 3, "rows": 3}
    assert [p.problem for p in res.kept] == ["English one", "English one", "Ünïcödé but Latin"]
    assert res.duplicates == 1


def test_wrapper_prefix_alone_is_not_stripped_into_nothing():
    # A prompt that is only the DAPO instruction has no problem in it: rejected as empty, never kept.
    c = Collector()
    c.add(*_rows((DAPO_PREFIX + DAPO_SUFFIX, "1"), ("Real", "2")))
    res = c.finish()
    assert res.rejected == {"empty problem": 1}
    assert [p.problem for p in res.kept] == ["Real"]


def _reference(rows, policy, dedup):
    """The obvious whole-table version (what the pandas baseline does), to check the streaming Collector."""
    valid = []
    for text, truth in rows:
        ans = integer_answer(truth)
        prob = strip_wrapper(text) if isinstance(text, str) else ""
        if ans is not None and " ".join(prob.split()):
            valid.append((" ".join(prob.split()), prob, ans))
    answers: dict[str, set[str]] = {}
    for key, _, ans in valid:
        answers.setdefault(key, set()).add(ans)
    conflicted = {k for k, a in answers.items() if len(a) > 1}
    first_answer: dict[str, str] = {}
    for key, _, ans in valid:
        first_answer.setdefault(key, ans)
    out, seen = [], {}
    for key, prob, ans in valid:
        if policy == "drop" and key in conflicted:
            continue
        if dedup:
            if key in seen:
                continue
            seen[key] = prob
            out.append((prob, first_answer[key]))
        elif policy != "keep-first" or ans == first_answer[key]:
            out.append((prob, ans))
    return out, len(valid) - len(answers), len(conflicted)


_texts = st.sampled_from(["A", "B", " A ", format_prompt("A", "dapo"), format_prompt("B", "boxed"), "C  c", "C c",
                          "", None, "   "])
_truths = st.sampled_from(["1", "01", "2", " 3", "x", "", None, 4, "\\frac{1}{2}"])


@given(st.lists(st.tuples(_texts, _truths), max_size=40), st.integers(1, 7),
       st.sampled_from(["drop", "keep-first"]), st.booleans())
@pytest.mark.slow
def test_streaming_collector_matches_the_whole_table_reference(rows, batch, policy, dedup):
    c = Collector(keep_rows=not dedup)
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        c.add([t for t, _ in chunk], [a for _, a in chunk])
    res = c.finish(dedup=dedup, conflict_policy=policy)
    expected, duplicates, conflicts = _reference(rows, policy, dedup)
    # Problem text of a kept row is that of its problem's first appearance (whitespace may differ per row).
    assert [(" ".join(p.problem.split()), p.answer) for p in res.kept] == [
        (" ".join(p.split()), a) for p, a in expected
    ]
    assert res.duplicates == duplicates and res.conflicts["problems"] == conflicts
    assert res.rows_in == len(rows)
    assert sum(res.rejected.values()) + res.duplicates + res.unique_problems == len(rows)

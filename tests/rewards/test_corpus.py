"""Accuracy on the labelled corpus and on the peer-suite cases: ours >= 99% on both, above both peers."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from peers import accuracy_table, format_table

HERE = Path(__file__).parent
CORPUS = HERE / "data" / "verifier_corpus.jsonl"
# A verbatim copy of shared/fixtures/verifier/peer_suite_cases.jsonl, so the test never depends on shared/.
PEER_SUITE = HERE / "data" / "peer_suite_cases.jsonl"


def _load(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_corpus_is_big_and_covers_the_issue_shapes():
    rows = _load(CORPUS)
    assert len(rows) >= 300
    shapes = collections.Counter(r["shape"] for r in rows)
    for shape in (
        "dapo_answer_line",
        "boxed_only",
        "qwen3_think",
        "qwen3_truncated",
        "truncated",
        "revised",
        "hedging",
        "separators",
        "leading_zeros",
        "units",
        "near_miss",
        "hostile",
        "long",
        "arith",
    ):
        assert shapes[shape] >= 1, shape
    assert len({r["id"] for r in rows}) == len(rows)
    labels = collections.Counter(r["label"] for r in rows)
    assert labels[True] >= 100 and labels[False] >= 100  # both directions are tested


def test_corpus_file_is_what_the_builder_makes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_corpus", HERE / "build_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.build() == _load(CORPUS)


@pytest.fixture(scope="module")
def table():
    sets = {"labelled corpus (tests/rewards)": _load(CORPUS),
            "peer-suite cases (shared/fixtures)": _load(PEER_SUITE)}
    t = accuracy_table(sets)
    print("\n" + format_table(t))
    return t


@pytest.mark.timeout(600)
def test_ours_at_least_99_percent_and_above_both_peers(table):
    assert len(table) == 2
    for name, res in table.items():
        ok, n = res["ours"]
        assert ok / n >= 0.99, (name, res)
        assert ok > res["math_dapo"][0], (name, res)
        assert ok > res["math_verify"][0], (name, res)

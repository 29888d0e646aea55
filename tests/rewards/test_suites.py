"""False positives and false negatives of our verifier, reported separately for every labelled suite.

- corpus: tests/rewards/data/verifier_corpus.jsonl (issue #4, built by build_corpus.py)
- peer suite: tests/rewards/data/peer_suite_cases.jsonl, a verbatim copy of the shared peer suite (cases from
  the tests of math-verify, lighteval, verl, SkyRL, inspect_ai and AReaL, with their own expected values), scored
  on two label sets: upstream's, untouched, and gspo's, upstream's with the relabels of
  tests/rewards/data/peer_suite_overlay.jsonl applied (each with its rule clause and reason). On upstream's
  labels gspo disagrees exactly on the overlay's rows, in the overlay's direction.
- adversarial: tests/rewards/data/adversarial_suite.jsonl (issue #14, built by build_adversarial.py): reward
  hacking (no answer, truncation, refusal, empty/unclosed box, candidate lists, answer only in the thinking,
  prompt echo, truth in the restatement) and formatting (units, spacing, display math, dfrac, ANSI/mojibake,
  stray braces).
- commitments: tests/rewards/data/commitment_suite.jsonl (issue #22, built by build_commitments.py): the final
  output commits to exactly one value (asides, conditional answers, disagreeing commitments, negated/exemplary/
  passing mentions, value-equal expressions, units, truncation, number words, brackets, pmod).
- grader: tests/rewards/data/grader_suite.jsonl (issue #32, built by build_grader_suite.py): what a response
  commits to, read as a careful grader (bounds, estimates, attribution, questions, retractions, hedges and
  negations in other languages, structured output, second candidates, format examples, and the forms a strict
  grader accepts), each row with the clause of docs/verifier.md that decides it.
- last commitment: tests/rewards/data/last_commit_suite.jsonl (issue #42, built by build_last_commit_suite.py): what
  the response commits to last (corrections, errata, doubt, withdrawals, working after the answer, named
  quantities) and the clean forms a grader accepts (looks read through, answer tags, value-first sentences).

A false positive (a wrong or missing answer credited) teaches the policy to stop answering, so every suite must
have none. `pytest tests/rewards/test_suites.py -s` prints the table.
"""

from __future__ import annotations

import collections
import importlib.util
import os
from pathlib import Path

import pytest
from peers import error_table, errors, load_jsonl, verdicts, with_overlay

DATA = Path(__file__).parent / "data"
PEER_UPSTREAM = DATA / "peer_suite_cases.jsonl"
PEER_OVERLAY = DATA / "peer_suite_overlay.jsonl"
SUITES = {
    "corpus": DATA / "verifier_corpus.jsonl",
    "peer suite (gspo labels)": PEER_UPSTREAM,
    "adversarial": DATA / "adversarial_suite.jsonl",
    "commitments": DATA / "commitment_suite.jsonl",
    "grader": DATA / "grader_suite.jsonl",
    "last commitment": DATA / "last_commit_suite.jsonl",
}
HACKING = ("no_answer", "truncated", "refusal", "empty_box", "candidates", "thinking_only", "prompt_echo", "restatement")
FORMATTING = ("units", "spacing", "display_math", "dfrac", "noise", "braces")


def _load(p: Path) -> list[dict]:
    rows = load_jsonl(p)
    return with_overlay(rows, load_jsonl(PEER_OVERLAY)) if p == PEER_UPSTREAM else rows


@pytest.fixture(scope="module", autouse=True)
def _limits_off_the_wall_clock():
    """These suites check verdicts, not speed. The scorer's two limits are wall-clock guards (math-verify's fallback
    worker FALLBACK_TIMEOUT_S 5 s, the per-response GSPO_REWARD_TIMEOUT_S 10 s; their own tests are in
    test_guard / test_fallback), and under a loaded CI host case c0285 (2,000 nested boxes, ~1.9 s CPU idle) ran past
    5 s wall and was refused in three fresh-clone runs (stops 45-47): a verdict of the host's load, not of the
    verifier. Here both are 120 s."""
    from gspo_cli.rewards import score

    saved_env, saved_fallback = os.environ.get("GSPO_REWARD_TIMEOUT_S"), score.FALLBACK_TIMEOUT_S
    os.environ["GSPO_REWARD_TIMEOUT_S"], score.FALLBACK_TIMEOUT_S = "120", 120.0
    yield
    score.FALLBACK_TIMEOUT_S = saved_fallback
    if saved_env is None:
        os.environ.pop("GSPO_REWARD_TIMEOUT_S", None)
    else:
        os.environ["GSPO_REWARD_TIMEOUT_S"] = saved_env


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[list[dict], list[dict], int]]:
    out = {}
    for name, path in SUITES.items():
        rows = _load(path)
        fp, fn = errors(rows, verdicts(rows))
        out[name] = (fp, fn, len(rows))
    print("\n" + error_table({name: _load(path) for name, path in SUITES.items()}))
    return out


def test_peer_suite_on_upstream_labels_differs_exactly_where_the_overlay_says():
    """Upstream's labels untouched: gspo's verdict disagrees with them on the overlay's rows only, and on each in
    the overlay's direction (a relabel is made in the open, never silently)."""
    rows = load_jsonl(PEER_UPSTREAM)
    overlay = {o["id"]: o for o in load_jsonl(PEER_OVERLAY)}
    fp, fn = errors(rows, verdicts(rows))
    print(f"\npeer suite on upstream labels: {len(rows) - len(fp) - len(fn)}/{len(rows)} agree, "
          f"FP {len(fp)} / FN {len(fn)}; overlay relabels {len(overlay)}")
    assert {r["id"] for r in fp + fn} == set(overlay)
    for r in fp + fn:
        assert overlay[r["id"]]["label"] != r["label"]


def _ids(rows: list[dict]) -> list[str]:
    return [f"{r['id']} ({r.get('shape', '')}: {r.get('note', '')[:60]})" for r in rows]


@pytest.mark.parametrize("suite", list(SUITES))
def test_no_false_positives(results, suite):
    fp, _, _ = results[suite]
    assert not fp, f"{suite}: credited but labelled wrong: {_ids(fp)}"


@pytest.mark.parametrize("suite", list(SUITES))
def test_no_false_negatives(results, suite):
    _, fn, _ = results[suite]
    assert not fn, f"{suite}: labelled right but refused: {_ids(fn)}"


def test_adversarial_suite_is_big_and_covers_the_issue_shapes():
    rows = _load(SUITES["adversarial"])
    assert len(rows) >= 150 + 15  # >= 150 attack/format cases plus the controls
    assert len({r["id"] for r in rows}) == len(rows)
    shapes = collections.Counter(r["shape"] for r in rows)
    for shape in HACKING + FORMATTING + ("control",):
        assert shapes[shape] >= 5, shape
    hacking = [r for r in rows if r["shape"] in HACKING]
    assert len(hacking) >= 90 and not any(r["label"] for r in hacking)  # every hack is labelled wrong
    # most hacks carry the ground truth somewhere in the text: a body-reading verifier would credit them
    assert sum(r["ground_truth"] in r["response"] for r in hacking) >= 0.8 * len(hacking)
    labels = collections.Counter(r["label"] for r in rows if r["shape"] in FORMATTING)
    assert labels[True] >= 40 and labels[False] >= 10


def test_adversarial_file_is_what_the_builder_makes():
    spec = importlib.util.spec_from_file_location("build_adversarial", Path(__file__).parent / "build_adversarial.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.build() == _load(SUITES["adversarial"])


def _builder(name: str):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_commitment_suite_is_what_the_builder_makes_and_covers_issue_22():
    mod = _builder("build_commitments")
    rows = _load(SUITES["commitments"])
    assert mod.build() == rows
    assert len(rows) >= 150 and len({r["id"] for r in rows}) == len(rows)
    assert len(mod.PROBLEMS) >= 16 and {p[0] for p in mod.PROBLEMS} >= {"math_dapo", "aime2024", "aime2025"}
    assert sum("<think>" in r["response"] for r in rows) == len(rows)  # Qwen3 thinking output throughout
    shapes = collections.Counter(r["shape"] for r in rows)
    for shape in ("aside", "conditional", "conflict", "negated", "exemplary", "passing", "value_equal", "unit",
                  "unit_paren", "truncated", "number_words", "brackets", "pmod", "control"):
        assert shapes[shape] >= 8, shape
    # most label-false cases hold the ground truth: a verifier that takes either candidate credits them
    false = [r for r in rows if not r["label"]]
    assert sum(r["ground_truth"] in r["response"].split("</think>")[-1] for r in false) >= 0.8 * len(false)


ISSUE_42_SHAPES = (  # every family of issue #42: the paid (wrong) and the unpaid (right), each with a control
    "correction", "conditional_alt", "working_after", "doubt_after", "withdrawal", "after_line", "named_box", "bullets",
    "tag", "footnote", "value_first", "unit_macro", "line_remark", "link", "choice", "answer_tag", "not_other", "qed",
    "label_in_box", "final_label", "paren_line", "html_comment", "base_subscript", "sign_braces", "sign_word")


def test_last_commit_suite_is_what_the_builder_makes_and_covers_issue_42():
    mod = _builder("build_last_commit_suite")
    rows = _load(SUITES["last commitment"])
    assert mod.build() == rows and len({r["id"] for r in rows}) == len(rows)
    shapes = collections.Counter(r["shape"] for r in rows)
    for shape in ISSUE_42_SHAPES:
        assert shapes[shape] >= 2, shape
    for shape in ("correction", "conditional_alt", "working_after", "doubt_after", "withdrawal", "after_line"):
        assert not any(r["label"] for r in rows if r["shape"] == shape), shape  # paid before #42: all wrong
    labels = {(r["shape"], r["label"]) for r in rows}
    for shape in ISSUE_42_SHAPES[6:]:  # unpaid before #42: right, each with a wrong control of its form
        assert (shape, True) in labels and ((shape, False) in labels or (shape + "_control", False) in labels), shape

"""One reward for training and evaluation: `compute_score` with verl's custom reward signature.

What counts as a final answer is decided in `gspo_cli.rewards.extract` (the rule is written there and in
docs/verifier.md); this module compares that answer with the ground truth.

Ground truths with an exact value (all of DAPO-Math-17k and AIME are integers) compare exactly as numbers;
anything else, or a prediction the exact path cannot evaluate (`x^2 - x^2`), goes to math-verify in a worker
process with a hard timeout. Scorers are picked by `data_source`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, NamedTuple

from gspo_cli.registry import Registry
from gspo_cli.rewards.extract import extract
from gspo_cli.rewards.guard import RewardTimeout, guarded, limit_s
from gspo_cli.rewards.normalize import (
    TOO_BIG,
    chain_values,
    clean,
    format_value,
    parse_number,
    parse_value,
    rhs,
    split_equalities,
)

CORRECT, INCORRECT = 1.0, -1.0
FALLBACK_TIMEOUT_S = 5.0
_SYMBOLIC = re.compile(r"[A-Za-z\\]")  # only something with a variable or a command is worth sympy's time


class Verdict(NamedTuple):  # a named tuple: one is made per response scored
    acc: bool
    pred: str
    how: str  # which evidence decided: "answer_line", "boxed", "prose:...", "math_verify", or why nothing


def _as_text(x: Any) -> str:
    if type(x) is str:
        return x
    if x is None:
        return ""
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    if isinstance(x, (list, tuple)) and x:  # some datasets store [answer]
        return _as_text(x[0])
    return str(x)


def _pred_str(c: str, v: Fraction | str | None) -> str:
    return format_value(v) if isinstance(v, Fraction) else c


def judge(
    answer: str | None,
    ground_truth: str,
    *,
    fallback: bool = True,
    fallback_timeout_s: float = FALLBACK_TIMEOUT_S,
    integer_form: bool = False,
) -> tuple[bool, str, str]:
    """(correct, normalised prediction, how) for an extracted answer against a ground truth.

    integer_form (AIME/DAPO): an integer ground truth wants the integer written as a number (`34`, `034`,
    `34.0`, `1,024`, `34 cm`), not an expression of it (`\\frac{68}{2}`, `34/1`, `10^3`, `404 + 405`).
    """
    if answer is None:
        return False, "", "no_answer"
    if answer.isdigit() and ground_truth.isdigit() and len(answer) < 30 and len(ground_truth) < 30:
        return int(answer) == int(ground_truth), str(int(answer)), "exact"  # most answers: two plain integers
    g = clean(ground_truth)
    p = clean(answer)
    if not p or not g:  # an empty answer never matches, not even an empty ground truth
        return False, p, "empty"
    pv = parse_value(p)
    gv = parse_value(g)
    written = None  # an equality chain (R5b): its one closed-form value, and whether a side is that number written
    if "=" in p and isinstance(gv, Fraction):
        chain = chain_values(p)
        if chain is not None and len(chain) == 1:
            pv = chain[0]
            written = any(parse_number(side.strip().strip("{} ")) == pv for side in split_equalities(p))
    pred = _pred_str(p, pv)
    if isinstance(gv, Fraction):
        if isinstance(pv, Fraction):
            plain = written if written is not None else parse_number(rhs(p).strip("{} ")) is not None
            if integer_form and not p.isdigit() and gv.denominator == 1 and not plain:
                return False, pred, "not_a_number"
            return pv == gv, pred, "exact"
        if pv == TOO_BIG or not _SYMBOLIC.search(p) or "box" in p:
            return False, pred, "exact"
    elif gv == TOO_BIG:
        return False, pred, "exact"
    elif p.replace(" ", "") == g.replace(" ", ""):
        return True, pred, "string"
    if not fallback:
        return False, pred, "undecided"
    from gspo_cli.rewards.fallback import math_verify_equal

    ok = math_verify_equal(g, p, timeout_s=fallback_timeout_s)
    if ok is None:
        return False, pred, "math_verify_timeout"
    return ok, pred, "math_verify"


def _numeric(ground_truth: str) -> bool:
    """Whether the ground truth is a number (so a bound or an estimate states no value, R2d)."""
    return ground_truth.isdigit() or _numeric_text(ground_truth)  # AIME and DAPO: plain integers


@lru_cache(maxsize=4096)
def _numeric_text(ground_truth: str) -> bool:
    return isinstance(parse_value(clean(ground_truth)), Fraction)


def verdict(solution_str: str, ground_truth: str, style: str = "dapo", **kw: Any) -> Verdict:
    ex = extract(solution_str, style, numeric=_numeric(ground_truth))
    acc, pred, how = judge(ex.answer, ground_truth, integer_form=style == "dapo", **kw)
    if ex.answer is None:
        how = ex.how
    elif how in ("exact", "string"):  # "not_a_number" stays: it says why
        how = ex.how
    return Verdict(acc, pred, how)


def _result(acc: bool, pred: str) -> dict:
    return {"score": CORRECT if acc else INCORRECT, "acc": bool(acc), "pred": pred}


def score_math(solution_str: str, ground_truth: str, style: str = "dapo") -> dict:
    v = verdict(solution_str, ground_truth, style)
    return _result(v.acc, v.pred)


_INT = re.compile(r"\s*([+-]?\d{1,50})\s*")
_ARITH_LINE = re.compile(r"(?i)answer\s*[:：]\s*([+-]?\d{1,50})\s*\.?\s*$")


def score_arith(solution_str: str, ground_truth: str) -> dict:
    """Synthetic integer arithmetic (the tiny demo), exact integers only.

    The answer is the last `Answer: N` line if there is one, else the first line when it is a bare integer
    (a tiny model that has not learnt to stop yet writes `7` and keeps going; its first line is its answer).
    """
    g = _INT.fullmatch(ground_truth)
    text = solution_str
    for tok in ("<|im_end|>", "<|endoftext|>", "</s>"):
        text = text.split(tok, 1)[0]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    m = None
    for ln in reversed(lines[-64:]):
        m = _ARITH_LINE.search(ln)
        if m:
            break
    if m is None and lines:
        m = _INT.fullmatch(lines[0])
    if m is None:
        return _result(False, "")
    pred = str(int(m.group(1)))
    return _result(g is not None and int(m.group(1)) == int(g.group(1)), pred)


Scorer = Callable[[str, str], dict]


def _math_dapo(s: str, g: str) -> dict:
    return score_math(s, g, "dapo")


def _boxed(s: str, g: str) -> dict:
    return score_math(s, g, "boxed")


@dataclass(frozen=True)
class ScorerEntry:
    """How one data_source is scored."""

    score: Scorer  # (solution, ground truth) -> {"score", "acc", "pred"}
    style: str | None  # extract.py's answer style the verdict uses; None: `score` judges alone (arith)
    prefix: bool = False  # data sources that start with the name use it too (aime24, aime-2024, aime_2025, ...)


# data_source -> its scorer (the gspo_cli/registry.py pattern); a data_source no entry names gets DEFAULT_SCORER.
SCORERS: Registry[ScorerEntry] = Registry("scorer", key="data_source")
SCORERS.add("math_dapo", ScorerEntry(_math_dapo, "dapo"))
SCORERS.add("aime", ScorerEntry(_math_dapo, "dapo", prefix=True))  # the DAPO AIME sets use the same "Answer:" prompt
SCORERS.add("arith", ScorerEntry(score_arith, None))
DEFAULT_SCORER = ScorerEntry(_boxed, "boxed")


def scorer_for(data_source: str | None) -> ScorerEntry:
    """The scorer entry of a data_source, stripped and lower-cased: its own, a prefix entry's, or the default."""
    low = (data_source or "").strip().lower()
    return SCORERS.get(low) or next((e for n, e in SCORERS.items() if e.prefix and low.startswith(n)), DEFAULT_SCORER)


def get_scorer(data_source: str | None) -> Scorer:
    """The scoring function for a data_source (see `scorer_for`)."""
    return scorer_for(data_source).score


def _score(data_source: Any, solution_str: Any, ground_truth: Any, limit: float | None = None) -> Verdict:
    """The verdict of the scorer for data_source; raises RewardTimeout when math-verify's worker overran."""
    scorer = scorer_for(_as_text(data_source))
    style = scorer.style
    if style is None:  # a scorer without an extraction step (arith): its own verdict
        res = scorer.score(_as_text(solution_str), _as_text(ground_truth))
        return Verdict(bool(res["acc"]), res["pred"], "exact" if res["pred"] else "no_answer")
    v = verdict(_as_text(solution_str), _as_text(ground_truth), style,
                fallback_timeout_s=min(FALLBACK_TIMEOUT_S, limit if limit is not None else limit_s()))
    if v.how == "math_verify_timeout":
        raise RewardTimeout
    return v


def explain(data_source: Any, solution_str: Any, ground_truth: Any) -> Verdict:
    """The verdict `compute_score` gives, with how it was reached (for reports such as `gspo score`); a scoring
    exception is how="error", an overrun how="timeout" (both counted in guard.TALLY)."""
    v, error, timeout = guarded(lambda: _score(data_source, solution_str, ground_truth), None)
    if v is None:
        return Verdict(False, "", "error" if error else "timeout")
    return v


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, **_: Any) -> dict:
    """verl `custom_reward_function` entry: {"score": 1.0 | -1.0, "acc": bool, "pred": str, "reward_errors": 0|1,
    "reward_timeouts": 0|1}. Never raises: an exception or overrun scores wrong and is counted (guard.py), and
    the two counts travel with the result (verl keeps extra keys per response: rollout dumps, val-aux metrics)."""
    limit = limit_s()
    v, error, timeout = guarded(lambda: _score(data_source, solution_str, ground_truth, limit), None, limit)
    acc = v is not None and v.acc
    return {"score": CORRECT if acc else INCORRECT, "acc": bool(acc), "pred": v.pred if v is not None else "",
            "reward_errors": float(error), "reward_timeouts": float(timeout)}

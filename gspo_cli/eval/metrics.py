"""Evaluation metrics over n scored samples per problem. Pure Python, no I/O.

Definitions (written into every results.json under `definitions`):

- avg@n: mean accuracy over all samples; with the same n for every problem this equals the mean over problems
  of (correct / n).
- pass@k: the unbiased estimator of Chen et al. (2021), per problem 1 - C(n-c, k) / C(n, k), averaged over
  problems. Computed exactly with integers (no bootstrap, no max-over-samples).
- maj@k: majority vote over the extracted answers of k samples. Each problem's n samples are cut into
  floor(n / k) consecutive blocks of k (sample order = generation order in samples.jsonl); each block votes and
  the problem's maj@k is the fraction of blocks whose voted answer is correct. Within a block, samples without an
  extracted answer do not vote; answers are compared as stripped strings; a tie between answers with the same
  count is broken in favour of the answer that appears first in the block. The voted answer is correct when the
  verifier marked the first sample carrying that answer correct. A block where no sample has an answer counts as
  wrong.
- stderr: the standard error across problems, sample std (ddof=1) of the per-problem values / sqrt(#problems);
  0 for a single problem.
- extraction_rate: fraction of samples with an extracted answer. truncation_rate: fraction that stopped because
  they hit max_tokens. Response lengths are in tokens; percentiles use linear interpolation (numpy's default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

DEFINITIONS = {
    "avg@n": "mean accuracy over all n samples of every problem",
    "pass@k": "unbiased estimator 1 - C(n-c,k)/C(n,k) per problem (Chen et al. 2021), mean over problems",
    "maj@k": (
        "majority vote of extracted answers within each of the floor(n/k) consecutive blocks of k samples, "
        "mean over blocks then problems; unanswered samples abstain; ties go to the answer seen first in the block; "
        "a block with no answer is wrong"
    ),
    "stderr": "sample std (ddof=1) of per-problem values / sqrt(#problems)",
    "extraction_rate": "fraction of samples with an extracted answer",
    "truncation_rate": "fraction of samples that hit max_tokens",
    "response_length": "response tokens per sample; p50/p90 by linear interpolation",
}


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """1 - C(n-c, k) / C(n, k) as an exact fraction. Needs 0 <= c <= n and 1 <= k <= n."""
    if not (0 <= c <= n) or not (1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:  # every k-subset contains a correct sample
        return Fraction(1)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    return float(pass_at_k_exact(n, c, k))


def _vote_key(answer: str | None) -> str | None:
    if answer is None:
        return None
    key = str(answer).strip()
    return key or None


def majority_vote(answers: Sequence[str | None]) -> int | None:
    """Index (into `answers`) of the first sample carrying the winning answer, or None when nobody answered.

    Ties between equally frequent answers go to the one that appears first.
    """
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for i, answer in enumerate(answers):
        key = _vote_key(answer)
        if key is None:
            continue
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, i)
    if not counts:
        return None
    best = max(counts, key=lambda a: (counts[a], -first[a]))
    return first[best]


def maj_at_k(answers: Sequence[str | None], correct: Sequence[bool], k: int) -> float:
    """maj@k for one problem: mean over the floor(n/k) consecutive blocks of k samples of the vote's correctness."""
    n = len(answers)
    if len(correct) != n:
        raise ValueError("answers and correct must have the same length")
    if not 1 <= k <= n:
        raise ValueError(f"maj@k needs 1 <= k <= n, got k={k} n={n}")
    blocks = n // k
    wins = 0
    for b in range(blocks):
        lo = b * k
        winner = majority_vote(answers[lo:lo + k])
        if winner is not None and correct[lo + winner]:
            wins += 1
    return wins / blocks


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def stderr(values: Sequence[float]) -> float:
    m = len(values)
    if m < 2:
        return 0.0
    mu = mean(values)
    var = sum((v - mu) ** 2 for v in values) / (m - 1)
    return math.sqrt(var / m)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default method); q in [0, 100]."""
    if not values:
        return 0.0
    data = sorted(values)
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


@dataclass
class ScoredSample:
    """What metrics need from one sample."""

    correct: bool
    pred: str | None
    response_tokens: int
    truncated: bool


def summarize(problems: Sequence[Sequence[ScoredSample]], ks: Sequence[int]) -> dict:
    """All metrics for `problems` (each a list of its samples, in generation order).

    Returns {"metrics": {...flat...}, "per_problem": [{n, correct, acc, pass@k..., maj@k..., majority_answer}]}.
    Every problem must have the same number of samples n, and every k must be <= n.
    """
    if not problems:
        raise ValueError("no problems to summarize")
    sizes = {len(p) for p in problems}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(f"every problem needs the same non-zero number of samples, got sizes {sorted(sizes)}")
    n = sizes.pop()
    ks = sorted(set(int(k) for k in ks))
    bad = [k for k in ks if not 1 <= k <= n]
    if bad:
        raise ValueError(f"k={bad} outside 1..n={n}")

    per_problem = []
    for samples in problems:
        c = sum(1 for s in samples if s.correct)
        answers = [s.pred for s in samples]
        flags = [s.correct for s in samples]
        winner = majority_vote(answers)
        row = {
            "n": n,
            "correct": c,
            "acc": c / n,
            "majority_answer": _vote_key(answers[winner]) if winner is not None else None,
        }
        for k in ks:
            row[f"pass@{k}"] = pass_at_k(n, c, k)
            row[f"maj@{k}"] = maj_at_k(answers, flags, k)
        per_problem.append(row)

    flat = [s for p in problems for s in p]
    lengths = [s.response_tokens for s in flat]
    accs = [r["acc"] for r in per_problem]
    metrics: dict[str, float | int] = {
        "num_problems": len(problems),
        "n": n,
        "num_samples": len(flat),
        f"avg@{n}": mean(accs),
        f"avg@{n}_stderr": stderr(accs),
    }
    for k in ks:
        vals = [r[f"pass@{k}"] for r in per_problem]
        metrics[f"pass@{k}"] = mean(vals)
        metrics[f"pass@{k}_stderr"] = stderr(vals)
    for k in ks:
        vals = [r[f"maj@{k}"] for r in per_problem]
        metrics[f"maj@{k}"] = mean(vals)
        metrics[f"maj@{k}_stderr"] = stderr(vals)
    metrics["extraction_rate"] = mean([1.0 if _vote_key(s.pred) is not None else 0.0 for s in flat])
    metrics["truncation_rate"] = mean([1.0 if s.truncated else 0.0 for s in flat])
    metrics["response_length_mean"] = mean(lengths)
    metrics["response_length_p50"] = percentile(lengths, 50)
    metrics["response_length_p90"] = percentile(lengths, 90)
    return {"metrics": metrics, "per_problem": per_problem}

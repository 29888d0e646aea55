"""Streaming dedup of (prompt text, ground truth) rows into problems, with conflicts and a language filter.

Pure code, no I/O: a source adapter feeds batches of raw prompt texts and ground truths into a `Collector`
(one dict entry per distinct raw text, so memory is O(unique problems), not O(rows)), then `finish` unwraps
each distinct text to its problem (`prompts.strip_wrapper`), merges texts that are the same problem, applies
the conflict policy and the language filter, and returns the kept problems in first-appearance order (the
order `pandas.drop_duplicates(keep="first")` gives).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gspo_cli.data.answers import integer_answer, reject_reason
from gspo_cli.data.prompts import strip_wrapper

# Han, kana, hangul and their compatibility blocks: the `en` filter drops a problem containing any of these.
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]")
EXAMPLES = 5  # examples kept per rejection reason / conflict list
_MISSING = object()


def problem_key(problem: str) -> str:
    """What makes two problems the same: the text with whitespace runs collapsed."""
    return " ".join(problem.split())


@dataclass
class Problem:
    problem: str
    answer: str
    first_row: int
    rows: int
    answers: set[str]
    meta: Any = None


@dataclass
class Result:
    kept: list[Problem]  # output rows, in input order
    rows_in: int
    rejected: dict[str, int]
    rejected_examples: dict[str, list[dict[str, Any]]]
    unique_problems: int
    duplicates: int  # valid rows that repeat an earlier problem
    conflicts: dict[str, Any]
    language: dict[str, Any] | None
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def rows_out(self) -> int:
        return len(self.kept)


class Collector:
    """One pass over the rows: counts, rejects, and one entry per distinct raw prompt text."""

    def __init__(self, *, keep_rows: bool = False, answer: Callable[[Any], str | None] = integer_answer,
                 why: Callable[[Any], str] = reject_reason):
        # raw text -> [first_row, answer, rows, other answers (set or None), meta]
        self.entries: dict[str, list[Any]] = {}
        self.rows_in = 0
        self.rejected: Counter[str] = Counter()
        self.examples: dict[str, list[dict[str, Any]]] = {}
        self._answer, self._why = answer, why
        self._answers: dict[Any, str | None] = {}  # raw ground truth -> normalised (few thousand distinct)
        # With dedup off every valid row is written: (raw text, answer, row, meta) per row.
        self.rows: list[tuple[str, str, int, Any]] | None = [] if keep_rows else None

    def _reject(self, reason: str, row: int, value: Any) -> None:
        self.rejected[reason] += 1
        ex = self.examples.setdefault(reason, [])
        if len(ex) < EXAMPLES:
            ex.append({"row": row, "value": value if isinstance(value, (str, int, float, type(None))) else repr(value)})

    def add(self, texts: Sequence[Any], truths: Sequence[Any], meta_of: Callable[[int], Any] | None = None) -> None:
        """Rows `rows_in .. rows_in+len(texts)` of the input; `meta_of(i)` gives row i's (batch-local) metadata."""
        entries, answers, rows = self.entries, self._answers, self.rows
        base = self.rows_in
        for i, (text, truth) in enumerate(zip(texts, truths, strict=True)):
            try:
                ans = answers.get(truth, _MISSING)
            except TypeError:  # unhashable (a list or dict): not an answer
                ans = None
            if ans is _MISSING:
                ans = answers[truth] = self._answer(truth)
            if ans is None:
                self._reject(self._why(truth), base + i, truth)
                continue
            if not isinstance(text, str) or not text:
                self._reject("empty problem", base + i, text)
                continue
            entry = entries.get(text)
            if entry is None:
                entries[text] = [base + i, ans, 1, None, meta_of(i) if meta_of else None]
            else:
                entry[2] += 1
                if ans != entry[1]:
                    if entry[3] is None:
                        entry[3] = set()
                    entry[3].add(ans)
            if rows is not None:
                rows.append((text, ans, base + i, meta_of(i) if meta_of else None))
        self.rows_in = base + len(texts)

    def finish(self, *, dedup: bool = True, conflict_policy: str = "drop", language: str | None = None) -> Result:
        groups, group_of = self._group_problems()
        valid_rows = sum(g.rows for g in groups.values())
        conflicts, dropped = _conflicts(groups, conflict_policy)
        lang, foreign = _language_filter(groups, dropped, language)
        dropped |= foreign
        if dedup:
            kept = [g for g in groups.values() if id(g) not in dropped]
        else:
            kept = []
            for raw, ans, row, meta in self.rows or []:
                group = group_of.get(raw)
                if group is None or id(group) in dropped:
                    continue
                if conflict_policy == "keep-first" and ans != group.answer:
                    continue
                kept.append(Problem(group.problem, ans, row, 1, {ans}, meta))
        return Result(
            kept=kept,
            rows_in=self.rows_in,
            rejected=dict(self.rejected),
            rejected_examples=self.examples,
            unique_problems=len(groups),
            duplicates=valid_rows - len(groups),
            conflicts=conflicts,
            language=lang,
        )

    def _group_problems(self) -> tuple[dict[str, Problem], dict[str, Problem | None]]:
        """Raw texts grouped by their normalised problem; raw text -> its problem (None: rejected as empty)."""
        groups: dict[str, Problem] = {}
        group_of: dict[str, Problem | None] = {}
        for raw, (first_row, ans, n, others, meta) in self.entries.items():
            problem = strip_wrapper(raw)
            key = problem_key(problem)
            if not key:
                self.rejected["empty problem"] += n
                self.examples.setdefault("empty problem", []).append({"row": first_row, "value": raw[:200]})
                group_of[raw] = None
                continue
            group = groups.get(key)
            if group is None:
                group = groups[key] = Problem(problem, ans, first_row, 0, {ans}, meta)
            group.rows += n
            group.answers.add(ans)
            if others:
                group.answers |= others
            group_of[raw] = group
        return groups, group_of


def _conflicts(groups: dict[str, Problem], policy: str) -> tuple[dict, set[int]]:
    """The report of problems seen with different answers, and the ids the policy drops (error: raise)."""
    from gspo_cli.errors import DataError

    conflicting = [g for g in groups.values() if len(g.answers) > 1]
    report = {
        "policy": policy,
        "problems": len(conflicting),
        "rows": sum(g.rows for g in conflicting),
        "examples": [{"problem": g.problem[:200], "answers": sorted(g.answers)} for g in conflicting[:EXAMPLES]],
    }
    if conflicting and policy == "error":
        ex = conflicting[0]
        raise DataError(
            f"{len(conflicting)} problem(s) appear with conflicting answers, e.g. "
            f"{ex.problem[:80]!r} with {sorted(ex.answers)}",
            "set data.conflict_policy to drop (drop them and report) or keep-first",
        )
    return report, ({id(g) for g in conflicting} if policy == "drop" else set())


def _language_filter(groups: dict[str, Problem], dropped: set[int], language: str | None) -> tuple[dict | None, set]:
    """`data.language: en` drops problems with CJK text: its report and the ids it drops."""
    from gspo_cli.errors import DataError

    if language is None:
        return None, set()
    if language != "en":
        raise DataError(f"unknown language filter {language!r}", "use data.language: en, or leave it unset")
    cjk = [g for g in groups.values() if id(g) not in dropped and CJK.search(g.problem)]
    return {"filter": "en", "problems": len(cjk), "rows": sum(g.rows for g in cjk)}, {id(g) for g in cjk}

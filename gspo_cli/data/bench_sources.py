"""Eval-only competition sources beside AIME-2024: AIME-2025 and AMC-2023, each from a pinned hub revision.

Where each comes from (docs/data.md has the table):

- `aime-2025`: `yentinglin/aime_2025`, the repo lighteval's `aime25` task reads (huggingface/lighteval,
  src/lighteval/tasks/tasks/aime.py), file `data/train-00000-of-00001-243207c6c994e1bd.parquet`, pinned at
  6f71d77b0b89b9dabe07ab466c51df33f514df7f (the revision NVIDIA's aiperf pins for the same task:
  ai-dynamo/aiperf src/aiperf/accuracy/worker.py). Columns id, problem, answer (a string); 30 problems (I and II).
  `math-ai/aime25` (problem, answer, id; 30 rows) has the same shape and is read as well.
- `amc-2023`: `math-ai/amc23`, file `test-00000-of-00001.parquet` at 80815d37005feb82cd7f8fbc6901d5d3eff43057 (the
  head of main on the hub's file page). Columns id, question, answer (float64: `27.0`), url; 40 problems of the 2023
  AMC 12A and 12B, rewritten to have a numeric answer. Answers are read as numbers: `27.0` -> `27`, so the verifier
  (and verl's math_dapo, which compares strings) sees the integer the response will write.

Both are always deduplicated and must give exactly their problem count; rows are sorted by problem text, as AIME-2024's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from gspo_cli.data import rows as vrows
from gspo_cli.data.answers import integer_answer, numeric_answer, numeric_reject_reason, reject_reason
from gspo_cli.data.dedup import Collector
from gspo_cli.data.readers import RawFile
from gspo_cli.data.source_base import BuildOptions, Built, Source, counts
from gspo_cli.errors import DataError


class _Competition(Source):
    """A contest's problems from one file with a problem column and an answer column (an id column is kept)."""

    default_splits = ("val",)
    always_dedup = True
    PROBLEM_COLUMNS: ClassVar[tuple[str, ...]] = ("problem",)
    DATA_SOURCE: ClassVar[str]
    PROBLEMS: ClassVar[int]
    CONTEST: ClassVar[str]  # how the error names the file it wanted

    def answer_of(self, value: Any) -> str | None:
        """The canonical ground truth of a raw answer, or None (rejected)."""
        return integer_answer(value)

    def reject_of(self, value: Any) -> str:
        return reject_reason(value)

    def _problem_column(self, raw: RawFile) -> str:
        found = [c for c in self.PROBLEM_COLUMNS if c in raw.columns]
        if not found or "answer" not in raw.columns:
            raw.require({found[0] if found else self.PROBLEM_COLUMNS[0]: "problem text", "answer": "answer"},
                        shape=f"({self.hub_repo})")
        return found[0]

    def build(self, raw: RawFile | None, opts: BuildOptions) -> Built:
        assert raw is not None
        problem = self._problem_column(raw)
        has_id = "id" in raw.columns
        collector = Collector(answer=self.answer_of, why=self.reject_of)
        for batch in raw.batches([problem, "answer"] + (["id"] if has_id else [])):
            ids = batch.column("id").to_pylist() if has_id else [None] * batch.num_rows
            collector.add(batch.column(problem).to_pylist(), batch.column("answer").to_pylist(), _id_of(ids))
        # repeated sampling belongs to eval's n, not to the data: always deduplicated
        res = collector.finish(dedup=True, conflict_policy=opts.conflict_policy, language=opts.language)
        if res.rows_out != self.PROBLEMS:
            raise DataError(
                f"{self.name}: {raw.path.name} gives {res.rows_out} problems, expected {self.PROBLEMS} (rows in "
                f"{res.rows_in}, rejected {sum(res.rejected.values())} {dict(res.rejected) or ''}, conflicting "
                f"{res.conflicts['problems']})".replace(" )", ")"),
                f"is this the {self.CONTEST} file ({self.hub_repo}, {self.hub_filename})?",
            )
        kept = sorted(res.kept, key=lambda p: p.problem)  # one canonical order, whatever the file's
        tables = {
            split: vrows.to_table(
                vrows.problem_row(p.problem, p.answer, prompt_style=opts.prompt_style, data_source=self.DATA_SOURCE,
                                  ability="MATH", index=i, split=split,
                                  extra={"id": p.meta} if p.meta is not None else None)
                for i, p in enumerate(kept))
            for split in opts.splits
        }
        return Built(tables, {**counts(res), "shape": f"{problem}, answer" + (", id" if has_id else "")})


def _id_of(ids: list[Any]) -> Callable[[int], str | None]:
    """Row i's source id (as text) for the collector's metadata."""
    return lambda i: None if ids[i] is None else str(ids[i])


class Aime2025(_Competition):
    name = "aime-2025"
    description = "AIME 2025 I+II: 30 integer-answer problems (yentinglin/aime_2025, pinned; or math-ai/aime25)"
    columns = {"problem": "problem text", "answer": "integer answer (string or int)", "id": "kept as extra_info.id"}
    hub_repo = "yentinglin/aime_2025"
    hub_filename = "data/train-00000-of-00001-243207c6c994e1bd.parquet"
    hub_revision = "6f71d77b0b89b9dabe07ab466c51df33f514df7f"
    DATA_SOURCE = "aime2025"  # verl's default_compute_score sends every `aime*` source to math_dapo
    PROBLEMS = 30
    CONTEST = "AIME 2025 (I and II, 30 problems)"


class Amc2023(_Competition):
    name = "amc-2023"
    description = "AMC 12 2023 A+B: 40 problems with numeric answers (math-ai/amc23, pinned)"
    columns = {"question | problem": "problem text", "answer": "number (float64 in math-ai/amc23: 27.0)",
               "id": "kept as extra_info.id"}
    hub_repo = "math-ai/amc23"
    hub_filename = "test-00000-of-00001.parquet"
    hub_revision = "80815d37005feb82cd7f8fbc6901d5d3eff43057"
    PROBLEM_COLUMNS = ("question", "problem")
    DATA_SOURCE = "amc2023"
    PROBLEMS = 40
    CONTEST = "AMC 12 2023 (A and B, 40 problems)"

    def answer_of(self, value: Any) -> str | None:
        return numeric_answer(value)

    def reject_of(self, value: Any) -> str:
        return numeric_reject_reason(value)

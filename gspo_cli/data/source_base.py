"""What every dataset source is: the adapter interface (`Source`), its options and output, and the manifest's counts.

Adapters live in data/sources.py (training sets, AIME-2024, synthetic arith) and data/bench_sources.py (the
eval-only contests); both build on this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gspo_cli.data.dedup import Result
from gspo_cli.data.readers import RawFile

Progress = Callable[[int, int | None], None]


@dataclass
class BuildOptions:
    splits: tuple[str, ...]
    prompt_style: str = "dapo"
    dedup: bool = True
    conflict_policy: str = "drop"
    language: str | None = None
    arith: Any = None  # schema.ArithSpec for the arith source
    progress: Progress | None = None


@dataclass
class Built:
    tables: dict[str, Any]  # split -> pyarrow Table
    stats: dict[str, Any] = field(default_factory=dict)


class Source:
    name: ClassVar[str]
    description: ClassVar[str]
    default_splits: ClassVar[tuple[str, ...]]
    # Raw columns the adapter reads: column -> what it holds (shown in errors and `docs/data.md`).
    columns: ClassVar[dict[str, str]] = {}
    needs_input: ClassVar[bool] = True
    hub_repo: ClassVar[str | None] = None
    hub_filename: ClassVar[str | None] = None
    # The hub commit read when the preset pins none for this source's own repo (None: the repo's main).
    hub_revision: ClassVar[str | None] = None
    # Deduplicated whatever data.dedup says (a benchmark's repeats belong to eval's n): dedup does not shape it.
    always_dedup: ClassVar[bool] = False

    def build(self, raw: RawFile | None, opts: BuildOptions) -> Built:
        raise NotImplementedError

    def settings(self, data: Any) -> dict[str, Any]:
        """The preset data settings (`data`: the preset's data section) that shape this source's output, as the
        manifest records them (data/manifest.py compares them on a re-prepare)."""
        return shaping_settings(data, dedup=not self.always_dedup)


def shaping_settings(data: Any, *, dedup: bool) -> dict[str, Any]:
    """The settings that shape a file-reading source's output; `dedup` False where `data.dedup` does not (a benchmark
    is always deduplicated: its repeats belong to eval's n)."""
    settings: dict[str, Any] = {"prompt_style": data.prompt_style}
    if dedup:
        settings["dedup"] = data.dedup
    settings["conflict_policy"] = data.conflict_policy
    settings["language"] = data.language
    return settings


def counts(res: Result) -> dict[str, Any]:
    """The manifest's counts of a dedup result: rows in and out, duplicates, conflicts, rejections by reason."""
    return {
        "rows_in": res.rows_in,
        "rows_out": res.rows_out,
        "unique_problems": res.unique_problems,
        "duplicates_removed": res.duplicates,
        "conflicts": res.conflicts,
        "language_filter": res.language,
        "rejected": {
            "rows": sum(res.rejected.values()),
            "reasons": {
                reason: {"rows": n, "examples": res.rejected_examples.get(reason, [])}
                for reason, n in sorted(res.rejected.items())
            },
        },
    }

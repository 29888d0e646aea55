"""Dataset sources: one adapter per raw dataset, each stating the raw columns it expects.

An adapter turns one raw input file (or nothing, for synthetic data) into verl-schema tables, one per split it
writes, plus the counts that go into the manifest. Registered adapters: `dapo-math-17k`, `aime-2024`, `arith`, `gsm8k`, `gsm8k-test`,
and the eval-only `aime-2025`, `amc-2023` (data/bench_sources.py).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from gspo_cli.data import rows as vrows
from gspo_cli.data.bench_sources import Aime2025, Amc2023
from gspo_cli.data.dedup import Collector
from gspo_cli.data.readers import RawFile
from gspo_cli.data.source_base import BuildOptions, Built, Progress, Source
from gspo_cli.data.source_base import counts as _counts
from gspo_cli.errors import DataError
from gspo_cli.registry import Registry

__all__ = ["SOURCES", "BuildOptions", "Built", "Progress", "Source", "get"]

# ------------------------------------------------------------------ verl-schema raw files


def _check_verl_types(raw: RawFile) -> None:
    import pyarrow as pa

    prompt = raw.field("prompt").type
    ok = pa.types.is_string(prompt) or pa.types.is_large_string(prompt)
    if pa.types.is_list(prompt) or pa.types.is_large_list(prompt):
        item = prompt.value_type
        ok = pa.types.is_struct(item) and item.get_field_index("content") >= 0
    if not ok:
        raise DataError(
            f"{raw.source}: column 'prompt' of {raw.path.name} has type {prompt}",
            "expected a list of {role, content} messages (verl's chat format) or a string",
        )
    rm = raw.field("reward_model").type
    if not (pa.types.is_struct(rm) and rm.get_field_index("ground_truth") >= 0):
        raise DataError(
            f"{raw.source}: column 'reward_model' of {raw.path.name} has type {rm}",
            "expected a struct {ground_truth, style}",
        )


def prompt_texts(arr) -> list[Any]:
    """The user message of each row of a verl `prompt` column (list of {role, content}, or plain strings)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr.to_pylist()
    if arr.null_count == 0 and len(arr):
        lengths = pc.min_max(pc.list_value_length(arr)).as_py()
        if lengths["min"] == 1 and lengths["max"] == 1:  # the common case: one message per row, no Python loop
            return arr.flatten().field("content").to_pylist()
    out: list[Any] = []
    for messages in arr.to_pylist():
        text = None
        for msg in messages or []:
            if msg and (msg.get("role") in (None, "user")):
                text = msg.get("content")
        out.append(text)
    return out


def _collect_verl(raw: RawFile, collector: Collector, progress: Progress | None, meta: bool) -> None:
    cols = ["prompt", "reward_model.ground_truth"]
    import pyarrow as pa

    optional: list[str] = []
    for name in ("data_source", "ability"):
        if name in raw.columns:
            optional.append(name)
    if "extra_info" in raw.columns:
        ei = raw.field("extra_info").type
        if pa.types.is_struct(ei) and ei.get_field_index("index") >= 0:
            optional.append("extra_info.index")
    for batch in raw.batches(cols + (optional if meta else [])):
        texts = prompt_texts(batch.column("prompt"))
        truths = batch.column("reward_model").field("ground_truth").to_pylist()
        meta_of = None
        if meta:
            ds = batch.column("data_source") if "data_source" in optional else None
            ab = batch.column("ability") if "ability" in optional else None
            ix = batch.column("extra_info").field("index") if "extra_info.index" in optional else None

            def meta_of(i, ds=ds, ab=ab, ix=ix):
                return (
                    ds[i].as_py() if ds is not None else None,
                    ab[i].as_py() if ab is not None else None,
                    ix[i].as_py() if ix is not None else None,
                )

        collector.add(texts, truths, meta_of)
        if progress:
            progress(collector.rows_in, raw.num_rows)


class DapoMath17k(Source):
    name = "dapo-math-17k"
    description = "DAPO-Math-17k (BytedTsinghua-SIA): ~17.4k integer-answer math problems, each repeated ~100x"
    default_splits = ("train",)
    columns = {
        "data_source": "string",
        "prompt": "list of {role, content}",
        "ability": "string",
        "reward_model": "{ground_truth, style}",
        "extra_info": "{index}",
    }
    hub_repo = "BytedTsinghua-SIA/DAPO-Math-17k"
    hub_filename = "data/dapo-math-17k.parquet"

    def build(self, raw: RawFile | None, opts: BuildOptions) -> Built:
        assert raw is not None
        raw.require({"prompt": self.columns["prompt"], "reward_model": self.columns["reward_model"]})
        _check_verl_types(raw)
        collector = Collector(keep_rows=not opts.dedup)
        _collect_verl(raw, collector, opts.progress, meta=True)
        res = collector.finish(dedup=opts.dedup, conflict_policy=opts.conflict_policy, language=opts.language)
        if not res.kept:
            raise DataError(
                f"{self.name}: no rows left out of {res.rows_in} (rejected: {res.rejected or 'none'})",
                "check the file: is it the DAPO-Math-17k parquet?",
            )
        tables = {}
        for split in opts.splits:
            out = []
            for i, p in enumerate(res.kept):
                data_source, ability, source_index = p.meta or (None, None, None)
                out.append(
                    vrows.problem_row(
                        p.problem,
                        p.answer,
                        prompt_style=opts.prompt_style,
                        data_source=data_source or "math_dapo",
                        ability=ability or "MATH",
                        index=i,
                        split=split,
                        extra={"source_index": None if source_index is None else str(source_index)},
                    )
                )
            tables[split] = vrows.to_table(out)
        return Built(tables, _counts(res))


class Aime2024(Source):
    """AIME 2024 (I and II): 30 problems, from any of the three published shapes."""

    name = "aime-2024"
    description = "AIME 2024 I+II: 30 integer-answer problems (BytedTsinghua-SIA, Maxwell-Jia or HuggingFaceH4 shape)"
    default_splits = ("val",)
    SHAPES: ClassVar[dict[str, dict[str, str]]] = {
        "BytedTsinghua-SIA/AIME-2024 (verl schema)": {
            "prompt": "list of {role, content}",
            "reward_model": "{ground_truth, style}",
        },
        "Maxwell-Jia/AIME_2024": {"ID": "", "Problem": "", "Solution": "", "Answer": ""},
        "HuggingFaceH4/aime_2024": {"id": "", "problem": "", "solution": "", "answer": "", "url": "", "year": ""},
    }
    columns = {"prompt | Problem | problem": "problem text", "reward_model | Answer | answer": "integer answer"}
    hub_repo = "BytedTsinghua-SIA/AIME-2024"
    hub_filename = "data/aime-2024.parquet"
    always_dedup = True
    DATA_SOURCE = "aime2024"
    PROBLEMS = 30

    def build(self, raw: RawFile | None, opts: BuildOptions) -> Built:
        assert raw is not None
        cols = set(raw.columns)
        collector = Collector()
        if {"prompt", "reward_model"} <= cols:
            shape = "verl"
            _check_verl_types(raw)
            _collect_verl(raw, collector, opts.progress, meta=False)
        elif {"Problem", "Answer"} <= cols or {"problem", "answer"} <= cols:
            p, a = ("Problem", "Answer") if {"Problem", "Answer"} <= cols else ("problem", "answer")
            shape = "Maxwell-Jia" if p == "Problem" else "HuggingFaceH4"
            for batch in raw.batches([p, a]):
                collector.add(batch.column(p).to_pylist(), batch.column(a).to_pylist())
        else:
            shapes = "; ".join(f"{name}: {', '.join(c)}" for name, c in self.SHAPES.items())
            raise DataError(
                f"{self.name}: {raw.path.name} has columns {', '.join(raw.columns) or '(none)'}, "
                f"which match no AIME-2024 shape",
                f"expected one of: {shapes}",
            )
        # AIME is always deduplicated: the verl-schema file repeats each problem 32 times, and repeated sampling
        # belongs to rollout.val.n / eval n, not to the data.
        res = collector.finish(dedup=True, conflict_policy=opts.conflict_policy, language=opts.language)
        if res.rows_out != self.PROBLEMS:
            raise DataError(
                f"{self.name}: {raw.path.name} ({shape} shape) gives {res.rows_out} problems, expected "
                f"{self.PROBLEMS} (rows in {res.rows_in}, rejected {sum(res.rejected.values())}, "
                f"conflicting {res.conflicts['problems']})",
                "is this the AIME 2024 file (I and II, 30 problems)?",
            )
        # One canonical order, whatever the shape: by problem text.
        kept = sorted(res.kept, key=lambda p: p.problem)
        tables = {
            split: vrows.to_table(
                vrows.problem_row(
                    p.problem,
                    p.answer,
                    prompt_style=opts.prompt_style,
                    data_source=self.DATA_SOURCE,
                    ability="MATH",
                    index=i,
                    split=split,
                )
                for i, p in enumerate(kept)
            )
            for split in opts.splits
        }
        stats = _counts(res)
        stats["shape"] = shape
        return Built(tables, stats)


class Arith(Source):
    name = "arith"
    description = "Synthetic integer arithmetic (a+b) for the tiny native demo; generated, no input file"
    default_splits = ("train", "val")
    needs_input = False

    def settings(self, data: Any) -> dict[str, Any]:
        return {"prompt_style": data.prompt_style, "arith": data.arith.model_dump(mode="json")}

    def build(self, raw: RawFile | None, opts: BuildOptions) -> Built:
        from gspo_cli.data.arith import make_arith_rows

        spec = opts.arith
        tables, counts = {}, {}
        # arith always writes both splits: train and val are independent draws of one distribution.
        for split in ("train", "val"):
            size = spec.train_size if split == "train" else spec.val_size
            rows = make_arith_rows(
                split, size, max_operand=spec.max_operand, ops=list(spec.ops), seed=spec.seed,
                prompt_style=opts.prompt_style,
            )
            tables[split] = vrows.to_table(rows)
            counts[split] = len(rows)
        return Built(tables, {"rows_in": 0, "rows_out": sum(counts.values()), "generated": counts})


class Gsm8k(Source):
    """GSM8K (openai/gsm8k, config `main`): grade-school word problems whose answer field ends in `#### N`.

    Rows as verl's examples/data_preprocess/gsm8k.py writes them (the parquet of verl's nightly GSPO jobs):
    data_source `openai/gsm8k` (verl's default reward then scores with its gsm8k rule), ability `math`, the
    ground truth the number after `#### ` with commas dropped, every row kept in file order (the nightly job
    reads them unshuffled: order is part of the job). Two sources, one per published file: `gsm8k` (train) and
    `gsm8k-test` (test, prepared as the val split).
    """

    name = "gsm8k"
    description = "GSM8K (openai/gsm8k) train split: 7,473 word problems, answer after '####'"
    default_splits = ("train",)
    columns = {"question": "problem text", "answer": "worked solution ending in '#### <number>'"}
    hub_repo = "openai/gsm8k"
    hub_filename = "main/train-00000-of-00001.parquet"
    DATA_SOURCE = "openai/gsm8k"
    _FINAL = re.compile(r"#### (\-?[0-9\.\,]+)")  # verl's extract_solution

    def build(self, raw: RawFile | None, opts: BuildOptions) -> Built:
        assert raw is not None
        raw.require(self.columns)
        rows: list[tuple[str, str]] = []
        rejected: dict[str, list[str]] = {}  # reason -> the questions (their first 80 characters)
        for batch in raw.batches(["question", "answer"]):
            questions, answers = batch.column("question").to_pylist(), batch.column("answer").to_pylist()
            for question, answer in zip(questions, answers, strict=True):
                m = self._FINAL.search(answer or "")
                if not question or m is None:
                    reason = "no question" if not question else "no '#### <number>' in answer"
                    rejected.setdefault(reason, []).append(str(question or "")[:80])
                    continue
                rows.append((question, m.group(1).replace(",", "")))
            if opts.progress:
                opts.progress(len(rows), raw.num_rows)
        if not rows:
            raise DataError(f"{self.name}: no usable rows in {raw.path.name} (rejected: "
                            f"{ {r: len(v) for r, v in rejected.items()} or 'none'})",
                            "is this a GSM8K parquet (columns question, answer)?")
        tables = {
            split: vrows.to_table(
                vrows.problem_row(q, a, prompt_style=opts.prompt_style, data_source=self.DATA_SOURCE, ability="math",
                                  index=i, split=split)
                for i, (q, a) in enumerate(rows)
            )
            for split in opts.splits
        }
        n_rejected = sum(len(v) for v in rejected.values())
        return Built(tables, {"rows_in": len(rows) + n_rejected, "rows_out": len(rows), "rejected": {
            "rows": n_rejected, "reasons": {r: {"rows": len(v), "examples": v[:3]} for r, v in rejected.items()}}})


class Gsm8kTest(Gsm8k):
    name = "gsm8k-test"
    description = "GSM8K (openai/gsm8k) test split: 1,319 word problems, prepared as the val split"
    default_splits = ("val",)
    hub_filename = "main/test-00000-of-00001.parquet"


# name -> adapter (the gspo_cli/registry.py pattern); each adapter carries its own facts (columns, splits, hub file,
# dedup rule) as class attributes, so nothing else keys on a source's name.
SOURCES: Registry[Source] = Registry("dataset source")
for _source in (DapoMath17k(), Aime2024(), Arith(), Gsm8k(), Gsm8kTest(), Aime2025(), Amc2023()):
    SOURCES.add(_source.name, _source)


def get(name: str) -> Source:
    """The adapter `name`; unknown: one ConfigError with the closest name and the known ones (registration order,
    not Registry.lookup's sorted list: the message predates the registry and stays as it was)."""
    if name not in SOURCES:
        import difflib

        close = difflib.get_close_matches(name, list(SOURCES), n=1)
        from gspo_cli.errors import ConfigError

        raise ConfigError(
            f"unknown dataset source {name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
            f"known sources: {', '.join(SOURCES)}",
        )
    return SOURCES[name]

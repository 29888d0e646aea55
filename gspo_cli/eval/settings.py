"""The settings of one eval run: the preset's `eval.benchmarks.<name>` with the command-line flags applied.

The schema is the only home of defaults: every built-in benchmark is in each preset's `eval.benchmarks` with its
own values (config/benchmarks.py), so what `gspo presets show --resolved` prints is what eval uses unless a flag
says otherwise. Without a preset the schema's own defaults apply (`EvalSection()`); a benchmark name that is not
built-in and not in the preset gets the plain `EvalBenchmark()` defaults (with `--data PATH`).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gspo_cli.config.benchmarks import BUILTIN_BENCHMARKS, fitting_ks
from gspo_cli.config.eval_schema import EvalBenchmark, EvalSection
from gspo_cli.errors import ConfigError, DataError
from gspo_cli.shell import quote

SETTING_KEYS = tuple(EvalBenchmark.model_fields)


@dataclass
class EvalSettings:
    """One benchmark's settings, resolved (the schema's EvalBenchmark fields), and the parquet it reads."""

    benchmark: str
    n: int
    k: list[int]
    temperature: float
    top_p: float
    top_k: int
    max_tokens: int
    prompt_style: str | None  # None = the prompts as prepared
    enable_thinking: bool
    batch_size: int  # hf backend: sequences per generate call
    seed: int
    data: Path
    # sha256 of the parquet read: two evals of one checkpoint are of the same problems only when this agrees (a
    # path can hold other data after a prepare-data of other settings, or a file replaced by hand)
    data_sha256: str = ""

    @classmethod
    def of(cls, benchmark: str, config: EvalBenchmark, data: Path) -> EvalSettings:
        return cls(benchmark=benchmark, **config.model_dump(exclude={"data"}), data=data,
                   data_sha256=file_digest(data))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "data": str(self.data)}


def eval_section(preset=None) -> EvalSection:
    return preset.eval if preset is not None else EvalSection()


def benchmark_settings(benchmark: str, preset=None, flags: dict[str, Any] | None = None) -> EvalBenchmark:
    """The preset's settings of `benchmark` (schema defaults without a preset) with the flags that are not None.

    A flag `--n` smaller than the preset's n without `--k` keeps the preset's k's that still fit.
    """
    base = eval_section(preset).benchmarks.get(benchmark) or EvalBenchmark()
    given = {key: value for key, value in (flags or {}).items() if value is not None}
    unknown = sorted(set(given) - set(SETTING_KEYS))
    if unknown:
        raise ValueError(f"unknown eval setting(s) {unknown}")
    values = {**base.model_dump(), **given}
    if "n" in given and "k" not in given:
        values["k"] = fitting_ks(base.k, int(given["n"]))
    from pydantic import ValidationError

    try:
        return EvalBenchmark.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else ""
        where = f"--{field.replace('_', '-')}" if field in given else f"eval.benchmarks.{benchmark}"
        message = err["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{where}: {message}", "flags override the preset's eval.benchmarks settings; "
                          "see `gspo presets show PRESET --resolved`") from None


def data_path(benchmark: str, config: EvalBenchmark, preset=None) -> Path:
    """The parquet eval reads: the benchmark's `data`, else the prepare-data output of its source (checked)."""
    from gspo_cli.config.benchmarks import source_of
    from gspo_cli.data.manifest import split_path

    if config.data:
        data = Path(config.data).expanduser()
        if not data.is_file():  # a file named by --data or the preset: prepare-data would not create it
            raise DataError(f"benchmark data not found: {data}", "check the path given by --data / eval.benchmarks")
        return data
    source = source_of(benchmark)
    if preset is not None:
        data = split_path(source, "val", preset)
    else:
        data = _only_set(source)
    if data.is_file():
        return data
    known = benchmark in BUILTIN_BENCHMARKS or (preset is not None and benchmark in preset.eval.benchmarks)
    if not known:
        import difflib

        names = list(dict.fromkeys([*BUILTIN_BENCHMARKS, *(preset.eval.benchmarks if preset is not None else ())]))
        close = difflib.get_close_matches(benchmark, names, n=1)
        raise ConfigError(f"unknown benchmark {benchmark!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
                          f"known: {', '.join(names)}; or pass --data PATH to a verl-schema parquet")
    raise DataError(f"benchmark data not found: {data}", f"{_prepare_hint(source, preset)}, or pass --data PATH")


def _prepare_hint(source: str, preset) -> str:
    """The prepare-data command that writes `source`: the preset's own run when it prepares it, else with
    `--dataset SOURCE` (an eval benchmark the preset does not list in eval.prepare)."""
    from gspo_cli.config.benchmarks import source_of

    if preset is None:
        return f"run: gspo prepare-data --preset PRESET --dataset {quote(source)}"
    prepares = {preset.data.train.source, preset.data.val.source, *map(source_of, preset.eval.prepare)}
    extra = "" if source in prepares else f" --dataset {quote(source)}"
    return f"run: gspo prepare-data --preset {quote(preset.name)}{extra}"


def _only_set(source: str) -> Path:
    """Without a preset there is no data key: the source's one prepared set under $GSPO_HOME/data; several (two
    presets' sets) are refused rather than guessed between."""
    from gspo_cli.data.manifest import sets_of
    from gspo_cli.layout import data_dir

    found = sets_of(source, data_dir())
    if len(found) > 1:
        raise ConfigError(f"{len(found)} prepared sets of {source} in {data_dir() / source} "
                          f"({', '.join(p.name for p in found)}), made by presets with different data settings",
                          "name the preset whose set to read: --preset NAME (or --data PATH)")
    return (found[0] if found else data_dir() / source) / "val.parquet"


@functools.lru_cache(maxsize=32)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    from gspo_cli.data.manifest import sha256_file

    return sha256_file(path)


def file_digest(path: Path) -> str:
    """sha256 of a data file (cached per path, size and mtime: one eval asks once per checkpoint)."""
    st = Path(path).stat()
    return _digest(str(path), st.st_size, st.st_mtime_ns)


def resolve_settings(benchmark: str, preset=None, flags: dict[str, Any] | None = None) -> EvalSettings:
    config = benchmark_settings(benchmark, preset, flags)
    return EvalSettings.of(benchmark, config, data_path(benchmark, config, preset))

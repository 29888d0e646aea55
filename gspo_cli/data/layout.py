"""Where prepared datasets live: `<data_dir>/<source>/<split>.parquet` plus `<data_dir>/<source>/manifest.json`.

A source used as the preset's `data.train` is written as `train.parquet`, as `data.val` as `val.parquet`
(arith, used for both, writes both). Eval benchmarks read the `val` split of their source.
"""

from __future__ import annotations

from pathlib import Path

from gspo_cli import paths

# eval benchmark name -> dataset source name
BENCHMARK_SOURCES = {"aime2024": "aime-2024", "arith": "arith"}


def data_dir(preset=None) -> Path:
    if preset is not None and preset.paths.data_dir:
        return Path(preset.paths.data_dir).expanduser()
    return paths.data_dir()


def source_dir(source: str, preset=None) -> Path:
    return data_dir(preset) / source


def split_path(source: str, split: str, preset=None) -> Path:
    return source_dir(source, preset) / f"{split}.parquet"


def manifest_path(source: str, preset=None) -> Path:
    return source_dir(source, preset) / "manifest.json"


def train_file(preset) -> Path:
    return split_path(preset.data.train.source, "train", preset)


def val_file(preset) -> Path:
    return split_path(preset.data.val.source, "val", preset)


def benchmark_file(benchmark: str, preset=None) -> Path:
    source = BENCHMARK_SOURCES.get(benchmark, benchmark)
    return split_path(source, "val", preset)

"""What `gspo report` reads of each run: metric series, eval results, resolved preset, health events, and a
legend label naming the settings in which the compared runs differ."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gspo_cli import untrusted
from gspo_cli.metrics.jsonl import Series, describe_order_problems, order_problems, read_series

# Settings named in a compare legend: at most this many; one line under the legend says how many more differ (all
# summary.md); the ones that most often explain a difference come first.
LEGEND_KEYS = 3
FIRST_KEYS = ("algorithm.loss_mode", "algorithm.adv_estimator", "model.path", "trainer.engine", "actor.lr",
              "rollout.n", "data.train_batch_size", "algorithm.clip_ratio_low", "algorithm.clip_ratio_high",
              "algorithm.loss_agg_mode", "algorithm.entropy_coeff", "rollout.temperature")
LABEL_WIDTH = 64  # characters per legend line


@dataclass
class RunData:
    path: Path
    series: Series
    evals: list[dict[str, Any]]
    config: dict[str, Any]
    health: list[dict[str, Any]] = field(default_factory=list)
    label: str = ""
    metrics_problem: str | None = None  # duplicated / out-of-order steps: two jobs wrote metrics.jsonl

    @property
    def name(self) -> str:
        return self.path.name


def read_evals(run: Path) -> list[dict[str, Any]]:
    """The results.json of every finished eval of this run, sorted by (benchmark, step)."""
    found = []
    for path in sorted((run / "eval").glob("*/results.json")):
        res = untrusted.read_mapping(path)  # size and depth limits: a run folder may be another's
        if res is None:
            continue
        step = (res.get("model") or {}).get("step")
        if step is None:
            m = re.search(r"-(\d+)$", path.parent.name)
            step = int(m.group(1)) if m else None
        res["_step"] = step
        res["_dir"] = path.parent.name
        found.append(res)
    # of two evals of one step (other settings or data), the newer last
    return sorted(found, key=lambda r: (r.get("benchmark", ""), r["_step"] if r["_step"] is not None else -1,
                                        str(r.get("created") or "")))


def load_run(path: Path) -> RunData:
    from gspo_cli.runs.catalog import load_config, read_health

    path = Path(path)
    problem = describe_order_problems(order_problems(path / "metrics.jsonl"))
    return RunData(path=path, series=read_series(path / "metrics.jsonl"), evals=read_evals(path),
                   config=load_config(path), health=read_health(path), label=path.name, metrics_problem=problem)


def metrics_warning(run: RunData) -> str | None:
    """The line `gspo report` shows for a metrics file two jobs wrote (None for a healthy one)."""
    if not run.metrics_problem:
        return None
    return (f"{run.name}: metrics.jsonl has {run.metrics_problem}: two jobs wrote this run; each chart keeps the "
            "last line per step, so curves may mix both jobs")


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def differing(runs: list[RunData]) -> list[str]:
    """Setting keys whose values differ among the runs (none for one run)."""
    from gspo_cli.config.diff import differing_keys

    return differing_keys([r.config for r in runs]) if len(runs) > 1 else []


def more_settings_note(runs: list[RunData]) -> str | None:
    """The line under a compare legend when more settings differ than the labels name (None: they name all)."""
    more = len(differing(runs)) - LEGEND_KEYS
    if more <= 0:
        return None
    return (f"{more} more setting{'s' if more > 1 else ''} differ between these runs than the labels name: "
            "summary.md lists every one")


def label_runs(runs: list[RunData]) -> list[str]:
    """Set each run's legend label, `name (key=value, ...)` with the settings that differ; returns those keys."""
    from gspo_cli.config.diff import flatten

    keys = sorted(differing(runs), key=lambda k: (FIRST_KEYS.index(k) if k in FIRST_KEYS else len(FIRST_KEYS), k))
    for run in runs:
        flat = flatten(run.config)
        # the rest are one note under the legend (`more_settings_note`), not "+29 more" in every label
        parts = [f"{k.rsplit('.', 1)[-1]}={_short(flat.get(k))}" for k in keys[:LEGEND_KEYS]]
        label = f"{run.name} ({', '.join(parts)})" if parts else run.name
        run.label = "\n".join(textwrap.wrap(label, LABEL_WIDTH, subsequent_indent="  ")) or run.name
    return keys

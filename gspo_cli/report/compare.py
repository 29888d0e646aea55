"""summary.md for several runs: one column per run, one row per setting that differs and per headline number
(final = mean of the last 10% of steps, best = the best logged value). A metric one engine does not log is "–"."""

from __future__ import annotations

from typing import Any

from gspo_cli.metrics.names import val_keys
from gspo_cli.report.data import RunData
from gspo_cli.report.summary import EVAL_FOOTNOTE, _charts_section, _health_section, fmt, pct


def _tail_mean(points) -> float | None:
    if not points:
        return None
    values = [v for _, v in points]
    tail = values[-max(1, len(values) // 10):]
    return sum(tail) / len(tail)


def _best(points, low: bool = False) -> float | None:
    if not points:
        return None
    return (min if low else max)(v for _, v in points)


def _throughput(run: RunData) -> float | None:
    """Response + prompt tokens per second of step time over the whole run (verl's perf/total_num_tokens)."""
    tokens = sum(v for _, v in run.series.get("perf/total_num_tokens", []))
    seconds = sum(v for _, v in run.series.get("timing_s/step", []))
    return tokens / seconds if tokens and seconds else None


def _val_key(run: RunData) -> str | None:
    keys = val_keys(run.series)
    return keys[0] if keys else None


def number_rows(runs: list[RunData]) -> list[tuple[str, list[str]]]:
    """(row label, one cell per run) for the headline numbers."""
    def row(label, fn):
        return (label, [fn(r) for r in runs])

    def series(r, key):
        return r.series.get(key) or []

    def steps(r):
        all_steps = {s for pts in r.series.values() for s, _ in pts}
        return str(max(all_steps)) if all_steps else "–"

    def wall(r):
        total = sum(v for _, v in series(r, "timing_s/step"))
        return f"{total:.0f} s" if total else "–"

    rows = [row("steps logged", steps), row("training wall time (sum of step times)", wall),
            row("tokens / s", lambda r: fmt(_throughput(r))),
            row("reward: final (last 10% mean)", lambda r: fmt(_tail_mean(series(r, "critic/score/mean")))),
            row("reward: best", lambda r: fmt(_best(series(r, "critic/score/mean")))),
            row("validation accuracy: final", lambda r: pct((series(r, _val_key(r)) or [(0, None)])[-1][1])),
            row("validation accuracy: best", lambda r: pct(_best(series(r, _val_key(r))))),
            row("response length: final (tokens)", lambda r: fmt(_tail_mean(series(r, "response_length/mean")))),
            row("pg_clipfrac: final", lambda r: fmt(_tail_mean(series(r, "actor/pg_clipfrac")))),
            row("grad norm: final", lambda r: fmt(_tail_mean(series(r, "actor/grad_norm"))))]
    return rows + _eval_number_rows(runs)


def _eval_number_rows(runs: list[RunData]) -> list[tuple[str, list[str]]]:
    benches = sorted({e["benchmark"] for r in runs for e in r.evals if "metrics" in e})
    rows = []
    for bench in benches:
        latest, best = [], []
        for r in runs:
            pts = sorted((e for e in r.evals if e.get("benchmark") == bench and "metrics" in e),
                         key=lambda e: e["_step"] if e["_step"] is not None else -1)
            latest.append(f"{pct(pts[-1]['accuracy'])} @ {pts[-1]['_step']}" if pts else "–")
            top = max(pts, key=lambda e: e["accuracy"]) if pts else None
            best.append(f"{pct(top['accuracy'])} @ {top['_step']}" if top else "–")
        rows += [(f"eval {bench}: latest checkpoint", latest), (f"eval {bench}: best checkpoint", best)]
    return rows


def setting_rows(runs: list[RunData], keys: list[str]) -> list[tuple[str, list[str]]]:
    from gspo_cli.config.diff import flatten

    flat = [flatten(r.config) for r in runs]
    rows = [("preset", [str(f.get("name", "–")) for f in flat]),
            ("engine", [str(f.get("trainer.engine", "–")) for f in flat])]
    return rows + [(f"`{k}`", [str(f.get(k, "–")) for f in flat]) for k in keys if k != "trainer.engine"]


def compare_summary(runs: list[RunData], keys: list[str], charts: list[tuple[str, str]],
                    missing: list[str]) -> str:
    lines = [f"# Compare {len(runs)} runs: " + ", ".join(r.name for r in runs), ""]
    head = "| | " + " | ".join(r.name for r in runs) + " |"
    sep = "|---|" + "---:|" * len(runs)
    lines += ["## Settings that differ", "", head, sep]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in setting_rows(runs, keys)]
    lines += ["", "## Numbers", "", head, sep]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in number_rows(runs)]
    lines += ["", "Final = mean of the last 10% of logged steps; accuracies in %. " + EVAL_FOOTNOTE, ""]
    lines += _health_section(runs)
    return "\n".join(lines + _charts_section(charts, missing))


def compare_index(runs: list[RunData], keys: list[str]) -> dict[str, Any]:
    """The numbers for --json: {row label: {run name: cell}}."""
    table = setting_rows(runs, keys) + number_rows(runs)
    return {label: dict(zip((r.name for r in runs), cells, strict=True)) for label, cells in table}

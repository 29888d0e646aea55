"""Job entrypoint of `gspo prepare-data` (`python -m gspo_cli.jobs.entry prepare-data ARGS...`).

The CLI builds the argv with `to_argv`; the job parses it back, loads the preset, prepares each source and
reports progress (rows read), one summary line per source, and the manifests as the job's result.
"""

from __future__ import annotations

import argparse
import time


def to_argv(
    *, preset: str, sets: list[str], datasets: list[str], inputs: list[str], out: str | None, force: bool
) -> list[str]:
    argv = ["--preset", preset]
    for item in sets:
        argv += ["--set", item]
    for name in datasets:
        argv += ["--dataset", name]
    for item in inputs:
        argv += ["--input", item]
    if out:
        argv += ["--out", out]
    if force:
        argv.append("--force")
    return argv


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gspo_cli.jobs.entry prepare-data")
    p.add_argument("--preset", required=True)
    p.add_argument("--set", dest="sets", action="append", default=[])
    p.add_argument("--dataset", dest="datasets", action="append", default=[])
    p.add_argument("--input", dest="inputs", action="append", default=[])
    p.add_argument("--out")
    p.add_argument("--force", action="store_true")
    return p


def main(argv: list[str]) -> int:
    from gspo_cli.config.presets import load_preset
    from gspo_cli.data import prepare
    from gspo_cli.jobs import events

    args = parser().parse_args(argv)
    preset = load_preset(args.preset, args.sets)
    last = [0.0]

    def progress(source: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.5 or (total is not None and done >= total):
            last[0] = now
            events.progress(done, total, task=f"{source} rows")

    reports = prepare.prepare(
        preset,
        datasets=args.datasets or None,
        inputs=prepare.parse_inputs(args.inputs),
        out_dir=args.out,
        force=args.force,
        progress=progress,
    )
    for report in reports:
        events.message(prepare.summary_line(report))
    events.result({"preset": preset.name, "datasets": reports})
    return 0

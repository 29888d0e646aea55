"""The `gspo prepare-data` job: `python -m gspo_cli.job_kinds prepare-data REQUEST.json`.

`request` (in the CLI process) checks the flags against the preset and returns the request, paths made absolute;
`main` (in the job) loads the preset, prepares each source and reports progress (rows read), one summary line
per source, and the manifests as the job's result. `prepared_rows` reads the manifests back for the CLI's table.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

JOB_COMMAND = "prepare-data"


def request(preset, *, preset_ref: str, sets: list[str], datasets: list[str], inputs: list[str],
            out: str | None, force: bool) -> dict[str, Any]:
    """The job's request; a bad --dataset or --input fails here, before any job. Paths are absolute because a
    Ray job runs in another working directory."""
    from gspo_cli.data import prepare

    parsed = prepare.parse_inputs(inputs)
    prepare.check_inputs(prepare.plan(preset, datasets or None), parsed)
    return {
        "preset": str(Path(preset_ref).resolve()) if Path(preset_ref).suffix in (".yaml", ".yml") else preset_ref,
        "sets": list(sets),
        "datasets": list(datasets),
        "inputs": {name: str(Path(path).expanduser().resolve()) for name, path in parsed.items()},
        "out": str(Path(out).expanduser().resolve()) if out else None,
        "force": bool(force),
    }


def prepared_rows(preset, req: dict[str, Any]) -> tuple[Path, list[dict[str, Any]]]:
    """(data folder, one row per source x split written) from the manifests the job left."""
    from gspo_cli import layout
    from gspo_cli.data import manifest, prepare

    data_dir = Path(req["out"]) if req["out"] else layout.data_dir(preset)
    rows = []
    for item in prepare.plan(preset, req["datasets"] or None):
        folder = manifest.prepared_dir(item.source, preset, data_dir=data_dir)
        m = manifest.read(item.source, preset, data_dir=data_dir)
        if m is None:
            continue
        conflicts = m.get("conflicts") or {}
        for split, written in m.get("outputs", {}).items():
            # A generated source (arith) reads no input rows: say so rather than "0 rows in".
            rows_in = "generated" if m.get("generated") else m.get("rows_in")
            rows.append({"source": item.source, "split": split, "folder": str(folder),
                         "file": str((folder / written["path"]).relative_to(data_dir)),
                         "rows_in": rows_in,
                         "duplicates": m.get("duplicates_removed"), "conflicts": conflicts.get("problems"),
                         "rejected": (m.get("rejected") or {}).get("rows", 0), "rows_out": written["rows"]})
    return data_dir, rows


def main(argv: list[str]) -> int:
    from gspo_cli.config.presets import load_preset
    from gspo_cli.data import prepare
    from gspo_cli.jobs import events
    from gspo_cli.jobs import request as job_request

    req = job_request.read(argv, JOB_COMMAND)
    preset = load_preset(req["preset"], req["sets"])
    last = [0.0]

    def progress(source: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.5 or (total is not None and done >= total):
            last[0] = now
            events.progress(done, total, task=f"{source} rows")

    reports = prepare.prepare(
        preset,
        datasets=req["datasets"] or None,
        inputs=req["inputs"],
        out_dir=req["out"],
        force=req["force"],
        progress=progress,
    )
    for report in reports:
        events.message(prepare.summary_line(report))
    events.result({"preset": preset.name, "datasets": reports})
    return 0

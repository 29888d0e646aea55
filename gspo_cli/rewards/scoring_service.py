"""The service behind `gspo score`: load the preset, pick its verifier, score the file with progress, report."""

from __future__ import annotations

import time
from pathlib import Path

from gspo_cli.errors import ConfigError
from gspo_cli.rewards import scoring_file as sf

PROGRESS_MIN_ROWS = 2000  # smaller files score in well under a second: no bar


def _progress(total: int, enabled: bool):
    """A rich progress bar on stderr (a no-op context when disabled), and its advance callback."""
    from contextlib import nullcontext

    if not enabled:
        return nullcontext(), None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from gspo_cli.console import err

    bar = Progress(TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err,
                   transient=True)
    task = bar.add_task("score", total=total)
    return bar, lambda n: bar.advance(task, n)


def run_score(file: str, *, preset: str, compare: str | None, data_source: str | None, show: int,
              sets: list[str]) -> dict:
    """Score `file` (a progress bar on stderr for large files) and return the report; the CLI renders it."""
    from gspo_cli.config.presets import load_preset
    from gspo_cli.console import err

    if compare is not None and compare not in sf.PEERS:
        raise ConfigError(f"--compare {compare!r} is not a verifier gspo can compare with",
                          f"use one of: {', '.join(sf.PEERS)}")
    if show < 0:
        raise ConfigError("--show must be 0 or more")
    p = load_preset(preset, sets)
    verifier = sf.preset_verifier(p)
    default_ds = data_source or sf.preset_data_source(p)
    path = Path(file)
    for name in (verifier, compare):  # an unknown or missing verifier fails before the file is read, and the
        if name:  # imports (verl pulls in torch) happen here, outside the timed scoring
            sf.verifier_fn(name)(sf.Row(0, "Answer: 1", "1", default_ds))
    total = sf.count_rows(path) if path.is_file() else 0
    bar, advance = _progress(total, enabled=total >= PROGRESS_MIN_ROWS and err.is_terminal)
    t0 = time.monotonic()
    with bar:
        tally = sf.score_file(path, verifier=verifier, default_ds=default_ds, compare=compare, keep=show,
                              progress=advance)
    report = sf.summary(tally, path=path, verifier=verifier, compare=compare, default_ds=default_ds,
                        seconds=time.monotonic() - t0)
    report["preset"] = preset
    return report

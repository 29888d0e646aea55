"""`gspo score`: score a file of responses with the verifier a preset trains with, and compare with a peer.

Input: JSON lines or parquet with `response` (or `output`, as in verl's rollout dumps), `ground_truth` (or
`gts`) and an optional `data_source` (rows without one use the preset's training data source, or
`--data-source`). Eval's `samples.jsonl` reads as it is. A row that cannot be scored stops the run with its
line (JSONL) or row (parquet) number.

Verifiers: `gspo` (`gspo_cli.rewards.compute_score`, the default reward) and `verl` (verl's own
`default_compute_score`, upstream's reward). Peers for `--compare`: `verl`, `math-verify` (the response
parsed by math-verify as verl's math_verify scorer does).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.errors import ConfigError, DataError
from gspo_cli.rewards.backends import REWARD_BACKENDS, Result, Row, peers, verifiers

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

# the reward backends registry's names (rewards/backends.py): `reward.verifier` choices and `--compare` peers
VERIFIERS = verifiers()
PEERS = peers()
RESPONSE_KEYS = ("response", "output", "solution_str")
TRUTH_KEYS = ("ground_truth", "gts")


def preset_verifier(preset: Preset) -> str:
    """The verifier a preset trains with: its `reward.verifier` (gspo | verl; see gspo_cli.rewards.choice)."""
    return str(preset.reward.verifier)


def preset_data_source(preset: Preset) -> str:
    """The data_source of the preset's training rows: what rows without a data_source are scored as."""
    from gspo_cli.rewards.choice import VERL_KNOWS  # adapter -> data_source for the math datasets

    # arith rows carry their source name as data_source (gspo_cli/data/arith.py)
    return {**VERL_KNOWS, "arith": "arith"}.get(str(preset.data.train.source), "math_dapo")


# ------------------------------------------------------------------ reading


def _where(path: Path, line: int) -> str:
    return f"{path}:{line}" if path.suffix != ".parquet" else f"{path} row {line}"


def _text(v: Any) -> str | None:
    if isinstance(v, list) and len(v) == 1:  # some datasets store [answer]
        v = v[0]
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (str, int, float)):
        return str(v)
    return None


def to_row(obj: Any, line: int, path: Path, default_ds: str) -> Row:
    """One input record as a Row, or a DataError naming its line and what is wrong."""
    where = _where(path, line)
    if not isinstance(obj, dict):
        raise DataError(f"{where}: expected an object with response and ground_truth, got {type(obj).__name__}")
    key = next((k for k in RESPONSE_KEYS if k in obj), None)
    if key is None or not isinstance(obj[key], str):
        raise DataError(f"{where}: no text `response` field", f"each row needs one of {', '.join(RESPONSE_KEYS)}")
    tkey = next((k for k in TRUTH_KEYS if k in obj), None)
    truth = _text(obj[tkey]) if tkey else None
    if truth is None:
        raise DataError(f"{where}: no `ground_truth` (a string or number)", f"each row needs one of {TRUTH_KEYS}")
    ds = obj.get("data_source")
    if ds is not None and not isinstance(ds, str):
        raise DataError(f"{where}: `data_source` must be a string, got {type(ds).__name__}")
    return Row(line, obj[key], truth, ds or default_ds)


def _jsonl(path: Path, default_ds: str) -> Iterator[Row]:
    with path.open("rb") as f:
        for n, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise DataError(f"{_where(path, n)}: not valid JSON ({e.__class__.__name__}: {e})") from None
            except RecursionError:  # hostile input: arrays/objects nested thousands deep
                raise DataError(f"{_where(path, n)}: JSON nested too deeply to read (over Python's recursion "
                                "limit)", "each line holds one flat object: response, ground_truth") from None
            yield to_row(obj, n, path, default_ds)


def _parquet(path: Path, default_ds: str) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises several types for a broken file
        raise DataError(f"{path}: not a readable parquet file ({e})") from None
    names = set(pf.schema_arrow.names)
    cols = [c for c in RESPONSE_KEYS + TRUTH_KEYS + ("data_source",) if c in names]
    n = 0
    for batch in pf.iter_batches(batch_size=2048, columns=cols):
        for obj in batch.to_pylist():
            n += 1
            yield to_row(obj, n, path, default_ds)


def count_rows(path: Path) -> int:
    """Rows in the file (non-blank lines of a JSONL file), for the progress bar."""
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows
        except (OSError, ValueError, pa.ArrowException):  # not parquet: read_rows reports it with its message
            return 0
    with path.open("rb") as f:
        return sum(1 for raw in f if raw.strip())


def read_rows(path: Path, default_ds: str) -> Iterator[Row]:
    """The rows of a JSONL (`.jsonl`, `.json`) or parquet file, streamed."""
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    if path.suffix == ".parquet":
        return _parquet(path, default_ds)
    if path.suffix in (".jsonl", ".json", ".ndjson"):
        return _jsonl(path, default_ds)
    raise DataError(f"{path}: unknown file type {path.suffix!r}", "use JSON lines (.jsonl) or parquet (.parquet)")


# ------------------------------------------------------------------ verifiers


def verifier_fn(name: str) -> Callable[[Row], Result]:
    """The scoring function of a verifier or peer name; a ConfigError when it is unknown or not installed."""
    backend = REWARD_BACKENDS.get(name)
    if backend is None:
        known = [*VERIFIERS, *(p for p in PEERS if p not in VERIFIERS)]
        raise ConfigError(f"unknown verifier {name!r}", f"choose one of {', '.join(known)}")
    backend.require()
    return backend.score_row


# ------------------------------------------------------------------ scoring


@dataclass
class Tally:
    """What `gspo score` reports: counts, reasons, and the disagreements with the peer."""

    rows: int = 0
    correct: int = 0
    extracted: int = 0
    extract_unknown: int = 0  # rows whose verifier does not report what it extracted (verl's float scorers)
    reasons: Counter = field(default_factory=Counter)  # how each verdict was reached (gspo) or "-"
    by_source: Counter = field(default_factory=Counter)
    errors: int = 0  # rows whose scoring raised (counted, scored wrong: reward/errors in training)
    timeouts: int = 0  # rows whose scoring overran the per-response limit (reward/timeouts)
    peer_correct: int = 0
    peer_errors: int = 0
    agree: Counter = field(default_factory=Counter)  # (ours, peer) -> rows
    disagreements: list[dict] = field(default_factory=list)
    # (data_source, the peer's error) -> rows the peer cannot score: said once, left out of the comparison
    unscorable: Counter = field(default_factory=Counter)

    def add(self, row: Row, ours: Result, peer: Result | None, keep: int) -> None:
        self.rows += 1
        self.correct += ours.acc
        self.extracted += bool(ours.pred)
        self.extract_unknown += ours.pred is None
        self.reasons[ours.how or "-"] += 1
        self.errors += ours.how == "error"
        self.timeouts += ours.how == "timeout"
        self.by_source[row.data_source] += 1
        if peer is None:
            return
        if peer.error is not None:
            self.peer_errors += 1
            self.unscorable[(row.data_source, peer.error)] += 1
            return
        self.peer_correct += peer.acc
        self.agree[(ours.acc, peer.acc)] += 1
        if ours.acc != peer.acc and len(self.disagreements) < keep:
            self.disagreements.append({
                "line": row.line, "data_source": row.data_source, "ground_truth": row.ground_truth,
                "ours": ours.acc, "ours_pred": ours.pred, "ours_how": ours.how, "peer": peer.acc,
                "peer_pred": peer.pred, "peer_error": peer.error, "response_tail": row.response[-160:],
            })


def score_file(
    path: Path,
    *,
    verifier: str,
    default_ds: str,
    compare: str | None = None,
    keep: int = 20,
    progress: Callable[[int], None] | None = None,
) -> Tally:
    """Score every row of `path`; with `compare`, also with that peer, keeping up to `keep` disagreements."""
    ours_fn = verifier_fn(verifier)
    peer_fn = verifier_fn(compare) if compare else None
    if compare and compare == verifier:
        raise ConfigError(f"--compare {compare} is the verifier being measured", "compare with another one")
    tally = Tally()
    for row in read_rows(path, default_ds):
        tally.add(row, ours_fn(row), peer_fn(row) if peer_fn else None, keep)
        if progress is not None:
            progress(1)
    if tally.rows == 0:
        raise DataError(f"{path}: no rows to score")
    return tally


def summary(tally: Tally, *, path: Path, verifier: str, compare: str | None, default_ds: str, seconds: float) -> dict:
    """The JSON-ready report of a Tally."""
    n = tally.rows
    out: dict[str, Any] = {
        "file": str(path), "verifier": verifier, "rows": n, "correct": tally.correct, "accuracy": tally.correct / n,
        "extracted": tally.extracted, "default_data_source": default_ds,
        "reward_errors": tally.errors, "reward_timeouts": tally.timeouts,
        "extraction_rate": tally.extracted / (n - tally.extract_unknown) if n > tally.extract_unknown else None,
        "data_sources": dict(tally.by_source.most_common()), "how": dict(tally.reasons.most_common()),
        "seconds": round(seconds, 3),
    }
    if compare:
        a = tally.agree
        scored = n - tally.peer_errors
        out["compare"] = {
            "peer": compare, "peer_correct": tally.peer_correct,
            "peer_accuracy": tally.peer_correct / scored if scored else None, "scored": scored,
            "peer_errors": tally.peer_errors,
            "unscorable": [{"data_source": ds, "error": error, "rows": rows}
                           for (ds, error), rows in tally.unscorable.most_common()],
            "both_right": a[(True, True)], "both_wrong": a[(False, False)],
            "only_ours": a[(True, False)], "only_peer": a[(False, True)],
            "disagree": a[(True, False)] + a[(False, True)], "examples": tally.disagreements,
        }
    return out

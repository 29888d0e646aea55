"""The verifiers we measure ourselves against, called as verl calls them. Used by tests and benchmarks only.

- `math_dapo`: verl.utils.reward_score.math_dapo.compute_score (the reward of verl's DAPO recipe).
- `math_verify`: the body of verl.utils.reward_score.math_verify (gold boxed and parsed as LaTeX, the response
  parsed as expression or LaTeX), run on the calling thread so that its signal timeouts work: call it from a
  main thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast


def math_dapo_acc(response: str, ground_truth: str) -> bool:
    from verl.utils.reward_score import math_dapo

    try:
        # verl annotates compute_score as float but it returns a dict with "acc"
        return bool(cast(Any, math_dapo.compute_score(response, ground_truth))["acc"])
    except Exception:  # noqa: BLE001 - a crash of the peer is a wrong verdict for it
        return False


def math_verify_acc(response: str, ground_truth: str) -> bool:
    from verl.utils.reward_score.math_verify import _verify_in_subprocess

    try:
        return _verify_in_subprocess("\\boxed{" + ground_truth + "}", response) > 0
    except Exception:  # noqa: BLE001
        return False


def ours_acc(response: str, ground_truth: str, data_source: str = "math_dapo") -> bool:
    from gspo_cli.rewards.score import compute_score

    return bool(compute_score(data_source, response, ground_truth)["acc"])


def ours_strict_acc(response: str, ground_truth: str, data_source: str = "math_dapo") -> bool:
    """gspo's verdict, counted right only when the decisive answer is an `Answer:` line: what a reward paying only
    the format DAPO's prompt instructs would pay (measured for issue #32; not a reward mode)."""
    from gspo_cli.rewards.score import explain

    v = explain(data_source, response, ground_truth)
    return bool(v.acc) and v.how == "answer_line"


def load_jsonl(path) -> list[dict]:
    """Rows of a JSONL file (blank lines skipped)."""
    import json
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def with_overlay(rows: list[dict], overlay: list[dict]) -> list[dict]:
    """The rows with gspo's relabels applied: each overlay row names an id, the upstream label it replaces, the
    new label and its reason. Refuses an overlay that names an unknown id or a label upstream does not have
    (the upstream file changed under it)."""
    by_id = {o["id"]: o for o in overlay}
    out, seen = [], set()
    for r in rows:
        o = by_id.get(r["id"])
        if o is None:
            out.append(r)
            continue
        if r["label"] != o["upstream_label"] or o["label"] == o["upstream_label"] or not o.get("reason"):
            raise ValueError(f"overlay row {o['id']} does not relabel upstream's {r['label']!r} with a reason")
        seen.add(r["id"])
        out.append({**r, "label": o["label"], "note": f"{r.get('note', '')} [gspo relabel, {o['clause']}: {o['reason']}]"})
    missing = set(by_id) - seen
    if missing:
        raise ValueError(f"overlay names ids the upstream file does not have: {sorted(missing)}")
    return out


PEERS: dict[str, Callable[..., bool]] = {"ours": ours_acc, "math_dapo": math_dapo_acc, "math_verify": math_verify_acc,
                                         "ours_strict": ours_strict_acc}
_WITH_SOURCE = ("ours", "ours_strict")
MAIN_PEERS = ("ours", "math_dapo", "math_verify")  # the accuracy table's columns


def accuracy_table(sets: dict[str, list[dict]]) -> dict[str, dict[str, tuple[int, int]]]:
    """{set name: {verifier: (agreeing with label, total)}}; rows need response, ground_truth, label."""
    import logging

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for name, rows in sets.items():
        out[name] = {}
        for peer in MAIN_PEERS:
            fn = PEERS[peer]
            ok = 0
            for r in rows:
                if peer in _WITH_SOURCE:
                    got = fn(r["response"], r["ground_truth"], r.get("data_source", "math_dapo"))
                else:
                    got = fn(r["response"], r["ground_truth"])
                ok += got == r["label"]
            out[name][peer] = (ok, len(rows))
    return out


def verdicts(rows: list[dict], peer: str = "ours") -> list[bool]:
    """The peer's verdict on every row (rows need response, ground_truth; data_source is used by ours)."""
    import logging

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    fn = PEERS[peer]
    if peer in _WITH_SOURCE:
        return [fn(r["response"], r["ground_truth"], r.get("data_source", "math_dapo")) for r in rows]
    return [fn(r["response"], r["ground_truth"]) for r in rows]


def errors(rows: list[dict], got: list[bool]) -> tuple[list[dict], list[dict]]:
    """(false positives, false negatives): rows credited against a False label, and refused against a True one."""
    fp = [r for r, g in zip(rows, got, strict=True) if g and not r["label"]]
    fn = [r for r, g in zip(rows, got, strict=True) if not g and r["label"]]
    return fp, fn


def error_table(sets: dict[str, list[dict]], peers: tuple[str, ...] = ("ours",)) -> str:
    """A Markdown table of false positives / false negatives per set and verifier."""
    lines = ["| set | cases | " + " | ".join(f"{p} FP / FN" for p in peers) + " |", "|---|---:|" + "---:|" * len(peers)]
    for name, rows in sets.items():
        cells = []
        for p in peers:
            fp, fn = errors(rows, verdicts(rows, p))
            cells.append(f"{len(fp)} / {len(fn)}")
        lines.append(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_table(table: dict[str, dict[str, tuple[int, int]]]) -> str:
    """A Markdown table: one row per set, one column per verifier."""
    peers = list(MAIN_PEERS)
    lines = ["| set | cases | " + " | ".join(peers) + " |", "|---|---:|" + "---:|" * len(peers)]
    for name, res in table.items():
        n = next(iter(res.values()))[1]
        cells = [f"{100 * ok / tot:.1f}% ({ok})" for ok, tot in (res[p] for p in peers)]
        lines.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

"""Acceptance baselines as files: the shipped upstream ones (gspo_cli/accept/baselines/*.json, with their
provenance), the ones `gspo accept --record` writes ($GSPO_HOME/baselines/<preset>.json), any file a user
names (`--baseline FILE`: ours, or upstream's own `key:value` text as verl-ascend-recipe stores it).

A baseline holds one value per metric, reduced as `rules` says (mean of steps 5-14; memory: last step), the
rules it is judged by, the preset and `--set`s that rerun its job, and where it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gspo_cli.accept import rules as R
from gspo_cli.errors import ConfigError
from gspo_cli.private import redact_set

FORMAT = "gspo-accept-baseline/1"
# verl's training routes gspo compiles (actor.strategy fsdp2 / megatron: engines/verl/compile.py, megatron.py)
ROUTES = ("fsdp2", "megatron")
# check_npu.py's NUMBER_PATTERN: integers, decimals, scientific notation; optionally inside np.float64(...)
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_VALUE = re.compile(rf"(?:np\.float64\()?({_NUMBER})\)?")


@dataclass
class Baseline:
    id: str
    title: str
    values: dict[str, float | None]
    rules: tuple[R.Rule, ...] = R.UPSTREAM_RULES
    preset: str | None = None  # the gspo preset that runs this job; None: gspo cannot compile it
    sets: list[str] = field(default_factory=list)
    route: str = "fsdp2"  # verl's training route: fsdp2 or megatron (gspo compiles both: ROUTES)
    machine: str = ""
    source: dict[str, Any] = field(default_factory=dict)  # repo, path, commit, url, checker, job script ...
    recorded: dict[str, Any] | None = None  # for a recorded baseline: run, host, date, per-step values
    path: str = ""  # the file it was read from
    shipped: bool = False  # one of gspo's own (gspo_cli/accept/baselines/): the only kind whose preset gspo runs

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT, "id": self.id, "title": self.title, "preset": self.preset,
            "sets": [redact_set(item) for item in self.sets],  # a saved baseline holds no secret (docs/security.md)
            "route": self.route, "machine": self.machine, "values": self.values,
            "rules": [R.rule_to_dict(r) for r in self.rules], "source": self.source,
        }
        if self.recorded is not None:
            out["recorded"] = self.recorded
        return out


def parse_upstream_text(text: str) -> dict[str, float]:
    """verl-ascend-recipe's baseline format (`key:value` lines, as check_npu.py's parse_base reads it): {key:
    value}; the legacy key perf/max_memory_allocated_gb stands for the memory metric when that one is absent."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or ":" not in line:
            continue
        key, raw = line.split(":", 1)
        m = _VALUE.search(raw)
        if m:
            out[key.strip()] = float(m.group(1))
    if R.LEGACY_MEMORY in out and R.MEMORY not in out:
        out[R.MEMORY] = out[R.LEGACY_MEMORY]
    return out


def from_dict(data: dict[str, Any], path: str = "") -> Baseline:
    where = path or "baseline"
    if data.get("format") != FORMAT:
        raise ConfigError(f"{where}: not a gspo acceptance baseline (format {data.get('format')!r})",
                          f"expected format {FORMAT!r}: a file `gspo accept --record` wrote, or upstream's "
                          "`key:value` baseline text")
    try:
        values = {k: (None if v is None else float(v)) for k, v in dict(data["values"]).items()}
        rules = tuple(R.rule_from_dict(r) for r in data.get("rules") or [R.rule_to_dict(r) for r in R.UPSTREAM_RULES])
        preset = data.get("preset")
        return Baseline(id=str(data["id"]), title=str(data.get("title", data["id"])), values=values, rules=rules,
                        preset=None if preset is None else str(preset), sets=[str(s) for s in data.get("sets") or []],
                        route=str(data.get("route", "fsdp2")), machine=str(data.get("machine", "")),
                        source=dict(data.get("source") or {}), recorded=data.get("recorded"), path=path)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: malformed baseline ({type(exc).__name__}: {exc})",
                          "rerun `gspo accept --record`, or fix the file by hand") from None


def read(path: str | Path) -> Baseline:
    """A baseline file: ours (JSON) or upstream's `key:value` text (judged by upstream's rules; its job is not
    known, so `--preset` must name the preset that runs it)."""
    from gspo_cli import untrusted

    p = Path(path).expanduser()
    try:
        text = untrusted.read_text(p, follow=True)  # a baseline file is data: size limits, a regular file only
    except untrusted.BadFile as exc:
        raise ConfigError(str(exc), "a baseline is a small JSON file `gspo accept --record` wrote, or upstream's "
                          "`key:value` text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read baseline {p}: {exc.strerror or exc}",
                          "pass --baseline FILE (a recorded .json or upstream's baseline .txt) or a shipped id "
                          "(`gspo accept --list`)") from None
    if text.lstrip().startswith("{"):
        try:
            data = untrusted.loads(text, str(p))  # depth-checked before json recurses
        except untrusted.BadFile as exc:
            raise ConfigError(str(exc), "rerun `gspo accept --record`") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: not a JSON object", "rerun `gspo accept --record`")
        return from_dict(data, str(p))
    values = parse_upstream_text(text)
    missing = [m for m in R.METRICS if m not in values]
    if missing:
        raise ConfigError(f"{p}: baseline text lacks {', '.join(missing)}",
                          "upstream's baseline files hold all five metrics of check_npu.py, one `key:value` a line")
    return Baseline(id=p.stem, title=f"upstream baseline text {p.name}", values={m: values[m] for m in R.METRICS},
                    source={"file": str(p)}, path=str(p))


# ------------------------------------------------------------------ shipped and recorded


def shipped_dir() -> Path:
    return Path(__file__).resolve().parent / "baselines"


def shipped() -> list[Baseline]:
    """The upstream baselines shipped with gspo, sorted by id."""
    found = [read(p) for p in shipped_dir().glob("*.json")]
    for b in found:
        b.shipped = True
    return sorted(found, key=lambda b: b.id)


def shipped_for(preset: str) -> Baseline | None:
    return next((b for b in shipped() if b.preset == preset), None)


def recorded_path(preset: str) -> Path:
    from gspo_cli import layout

    return layout.baselines_dir() / f"{layout.path_component(preset, 'preset name', 'name a preset')}.json"


def recorded() -> list[Baseline]:
    from gspo_cli import layout, untrusted

    found = []
    for path in layout.baselines_dir().glob("*.json"):
        try:
            found.append(read(path))
        except ConfigError as exc:  # one bad file costs its own line (`untrusted.skipped`), never the list
            untrusted.note(path, exc.message)
    return sorted(found, key=lambda b: b.id)


def _cost(record_cost: Callable[[], str] | None) -> str:
    """The planner's cost of `--record`, or "" where it has none (a preset that does not load says so itself)."""
    from gspo_cli.errors import GspoError

    try:
        return record_cost() if record_cost is not None else ""
    except GspoError:
        return ""


def resolve(ref: str | None, preset: str | None, record_cost: Callable[[], str] | None = None) -> Baseline:
    """`--baseline REF` (a shipped id or a file), else the shipped baseline of `preset`, else the one recorded for
    `preset` on this cluster; a one-line error naming both ways to get one when there is none, with what `--record`
    costs (`record_cost`: the planner's steps x predicted step on the preset's devices, handed in by the CLI)."""
    if ref:
        by_id = {b.id: b for b in shipped()}
        if ref in by_id:
            return by_id[ref]
        return read(ref)
    if not preset:
        raise ConfigError("no preset and no baseline given",
                          "pass --preset NAME (a preset with a baseline: `gspo accept --list`) or --baseline FILE")
    found = shipped_for(preset)
    if found is not None:
        return found
    path = recorded_path(preset)
    if path.exists():
        return read(path)
    raise ConfigError(f"no acceptance baseline for preset {preset!r}: no upstream baseline ships for it and none "
                      f"is recorded at {path}",
                      f"record one on a cluster you trust: gspo accept --preset {preset} --record "
                      + (f"(runs {cost}) " if (cost := _cost(record_cost)) else "")
                      + "(or pass --baseline FILE; `gspo accept --list` shows the upstream ones)")

"""How `gspo runs list | show | rm` print (the JSON of --json is runs/catalog.py's rows and info as they are): the
runs table (narrower at 80 columns), one run's page, the question before a run folder is removed."""

from __future__ import annotations

import time
from pathlib import Path

from rich import box
from rich.markup import escape
from rich.table import Table

from gspo_cli import untrusted
from gspo_cli.console import err, out, styled
from gspo_cli.runs.catalog import REPEATS


def _ago(ts: float | None) -> str:
    if not ts:
        return "-"
    s = max(0, time.time() - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{int(s // size)}{unit} ago"
    return f"{int(s)}s ago"


def _size(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "K", "M", "G"):
        if n < 1024 or unit == "G":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return "-"


def _num(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):  # a value from a run folder that is no number
        return "?"
    return f"{100 * v:.1f}%" if pct else f"{v:.3g}"


def _status(info: dict) -> str:
    return styled(escape(str(info["status"]))) + (" [red]![/]" if info["health"]["errors"] else "")


def render_list(rows: list[dict]) -> None:
    """One row per run, newest activity first: status, steps, last reward, best validation, latest evals."""
    rows = untrusted.clean_tree(rows)  # names and values from run folders: no escape sequences reach the terminal
    if not rows:
        err.print("No runs yet. Start one: gspo train --preset tiny")
        return
    wide = out.width >= 110  # engine, preset, size and eval names only where they fit: readable at 80 columns
    table = Table(title="runs (% = accuracy; ! = health errors)", title_justify="left", pad_edge=False,
                  box=box.HEAVY_HEAD if wide else box.SIMPLE_HEAD, show_edge=wide,
                  collapse_padding=not wide)
    table.add_column("run", no_wrap=True, overflow="ellipsis", max_width=28 if wide else 25)
    if wide:
        table.add_column("engine")
        table.add_column("preset")
    table.add_column("status", no_wrap=True)
    for col in ("steps", "reward", "best val" if wide else "val", "eval" if wide else "eval@step"):
        table.add_column(col, justify="right", no_wrap=True, min_width=5)
    if wide:
        table.add_column("size", justify="right")
    table.add_column("active" if wide else "ago", no_wrap=True, min_width=3)
    for r in rows:
        best = r["best_val"]
        steps = f"{r['steps_done']}/{r['total_steps'] or '?'}"
        if wide:
            evals = " ".join(f"{e['benchmark']} {_num(e['accuracy'], True)}@{e['step']}" for e in r["evals"])
        else:
            evals = " ".join(f"{_num(e['accuracy'], True)}@{e['step']}" for e in r["evals"][:1])
        cells = [escape(r["name"])] + ([escape(str(r["engine"] or "-")), escape(str(r["preset"] or "-"))]
                                       if wide else [])
        evals = escape(evals)
        cells += [_status(r), steps, _num(r["last_reward"]), _num(best and best["value"], True), evals or "-"]
        ago = _ago(r["last_activity"])
        cells += ([_size(r["size_bytes"])] if wide else []) + [ago if wide else ago.replace(" ago", "")]
        table.add_row(*cells)
    out.print(table)


def render_show(info: dict) -> None:
    """One run: status, folder, job, steps, settings changed from its preset, checkpoints, evals, health, next."""
    info = untrusted.clean_tree(info)  # what a run folder holds is printed without escape sequences
    p = out.print
    best = info["best_val"]
    p(f"[bold]{escape(info['name'])}[/]  {info['engine'] or '?'} engine, preset {info['preset'] or '?'}, "
      f"{_status(info)}" + (f": {escape(info['error'])}" if info.get("error") else ""), highlight=False)
    p(f"  folder   {escape(info['path'])} ({_size(info['size_bytes'])}, active {_ago(info['last_activity'])})",
      highlight=False)
    if info["status"] in ("failed", "killed", "stopped"):
        p(f"  why      {escape(_why(info))}", highlight=False)
    if info.get("job_id"):
        p(f"  job      {escape(info['job_id'])} on {escape(str(info.get('job_host') or '?'))} (writes this run)",
          highlight=False)
    p(f"  steps    {info['steps_done']}/{info['total_steps'] or '?'}; last reward {_num(info['last_reward'])}; "
      f"best validation {_num(best and best['value'], True)}" + (f" at step {best['step']}" if best else ""),
      highlight=False)
    if info.get("metrics_problem"):
        p(f"  [red]metrics  {escape(info['metrics_problem'])} in metrics.jsonl: two jobs wrote this run; charts "
          "keep the last line per step[/]", highlight=False)
    diff = info["preset_diff"]
    p(f"\n[bold]Settings vs preset {diff['base']}[/]" + (f" ({escape(diff['error'])})" if diff["error"] else ""))
    for c in diff["changes"] or []:
        p(f"  {c['key']}: {c['base']!r} -> {c['run']!r}", highlight=False)
    if not diff["changes"] and not diff["error"]:
        p("  (none: the preset as is)")
    p("\n[bold]Checkpoints[/]")
    for c in info["checkpoints"] or []:
        p(f"  step {c['step']:>6}  " + ("complete" if c["complete"] else "[yellow]partial (not usable)[/]"))
    if not info["checkpoints"]:
        p("  (none)")
    p("\n[bold]Evals[/]")
    for e in info["evals_all"] or []:
        p(f"  {e['benchmark']} step {e['step']}: avg@{e['n']} {_num(e['accuracy'], True)} of {e.get('problems') or '?'} "
          f"problems on {e['device']}, "
          f"{e['settings']}  [dim]{escape(e['dir'].rsplit('/', 1)[-1])}[/]", highlight=False)
    if not info["evals_all"]:
        p("  (none)")
    if info["health_events"]:
        p("\n[bold]Health[/]")
        for h in info["health_events"][-10:]:
            p(f"  step {h['step']}: {h.get('severity', '?')} {h.get('rule', '?')} {escape(str(h.get('message', '')))}",
              highlight=False)
    p("\n[bold]Next[/]")
    for what, cmd in info["commands"].items():
        p(f"  {what:<9} {escape(cmd)}", highlight=False)


def _why(info: dict) -> str:
    """Why the run ended and whether running it again can help (the job wrapper's verdict in job_state.json)."""
    kind = info.get("failure_kind")
    if info["status"] == "killed":
        return "the job ended without a word (killed, or its node lost); resume continues from the newest checkpoint"
    if kind in REPEATS:
        return f"{kind} failure: {REPEATS[kind]}; running it again repeats it: fix the cause first"
    if kind:
        return f"{kind} failure: the job wrapper's restarts did not get past it"
    if info["status"] == "stopped":
        return "stopped by hand"
    code = info.get("exit_code")
    return (f"exit code {code}; " if code is not None else "") + "no cause recorded: the job's log has it " \
        "(gspo jobs list; gspo jobs logs ID)"


def remove_question(path: Path, info: dict) -> str:
    return f"Delete {path} ({_size(info['size_bytes'])}, {info['status']}, {info['steps_done']} steps)?"

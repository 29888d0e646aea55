"""Text output of `gspo score`: the headline figures, why verdicts went as they did, and the disagreements."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from rich.console import Console


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def _verdict(acc: bool, pred: str | None, how: str = "") -> str:
    mark = "[green]right[/]" if acc else "[red]wrong[/]"
    detail = ", ".join(x for x in (escape(repr(pred)) if pred is not None else "", escape(how)) if x)
    return f"{mark} ({detail})" if detail else mark


def headline(s: dict[str, Any]) -> Table:
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column()
    t.add_row("file", escape(s["file"]))
    t.add_row("verifier", f"{s['verifier']} (preset {escape(s.get('preset') or '-')})")
    rate = s["rows"] / max(s["seconds"], 1e-9)
    t.add_row("rows", f"{s['rows']:,} scored in {s['seconds']:.1f} s ({rate:,.0f} rows/s, imports excluded)")
    t.add_row("accuracy", f"{_pct(s['accuracy'])} ({s['correct']:,} credited)")
    rate = s["extraction_rate"]
    t.add_row("extraction rate", f"{_pct(rate)} ({s['extracted']:,} rows state a final answer)" if rate is not None
              else "n/a (this verifier does not report what it extracted)")
    if "reward_errors" in s:
        bad = s["reward_errors"] + s["reward_timeouts"]
        t.add_row("scoring errors", f"{s['reward_errors']:,} exceptions, {s['reward_timeouts']:,} time-outs"
                  + (" [red](scored wrong; the first is printed above)[/]" if bad else ""))
    sources = ", ".join(f"{escape(k)}: {v:,}" for k, v in s["data_sources"].items())
    t.add_row("data sources", f"{sources} (rows without one: {escape(s['default_data_source'])})")
    return t


def reasons(s: dict[str, Any]) -> Table:
    t = Table(title="How the verdicts were reached", title_justify="left")
    t.add_column("how")
    t.add_column("rows", justify="right")
    t.add_column("share", justify="right")
    for how, n in s["how"].items():
        t.add_row(escape(how), f"{n:,}", _pct(n / s["rows"]))
    return t


def agreement(s: dict[str, Any]) -> Table:
    c = s["compare"]
    ours, peer = s["verifier"], c["peer"]
    scored = c.get("scored", s["rows"])
    of = f" of the {scored:,} rows {peer} scores" if scored != s["rows"] else ""
    t = Table(title=f"{ours} vs {peer}: {c['disagree']:,} disagreements ({_pct(c['disagree'] / scored if scored else 0)}"
                    f"{of})", title_justify="left")
    t.add_column("")
    t.add_column(f"{peer} right", justify="right")
    t.add_column(f"{peer} wrong", justify="right")
    t.add_row(f"{ours} right", f"{c['both_right']:,}", f"{c['only_ours']:,}")
    t.add_row(f"{ours} wrong", f"{c['only_peer']:,}", f"{c['both_wrong']:,}")
    peer_acc = _pct(c["peer_accuracy"]) if c["peer_accuracy"] is not None else "-"
    t.add_row("accuracy", peer_acc + f" ({peer})", _pct(s["accuracy"]) + f" ({ours})")
    return t


def examples(s: dict[str, Any]) -> Table:
    c = s["compare"]
    t = Table(title=f"Disagreements (first {len(c['examples'])})", title_justify="left", show_lines=True)
    for col in ("line", "truth", s["verifier"], c["peer"], "end of the response"):
        t.add_column(col, overflow="fold")
    for e in c["examples"]:
        peer = _verdict(e["peer"], e["peer_pred"], e["peer_error"] or "")
        t.add_row(str(e["line"]), escape(e["ground_truth"]), _verdict(e["ours"], e["ours_pred"], e["ours_how"]), peer,
                  escape(e["response_tail"][-100:]))
    return t


def unscorable_lines(s: dict[str, Any]) -> list[str]:
    """Once, up front: which rows the peer cannot score and why (one line per data_source and error)."""
    c = s.get("compare") or {}
    lines = []
    for u in c.get("unscorable") or []:
        lines.append(f"{c['peer']} cannot score {u['rows']:,} row(s) with data_source {u['data_source']!r}: "
                     f"{u['error']}; they are left out of the comparison")
    return lines


def render(s: dict[str, Any], console: Console) -> None:
    for line in unscorable_lines(s):
        console.print(f"[yellow]note:[/] {escape(line)}", highlight=False)
    console.print(headline(s))
    console.print()
    console.print(reasons(s))
    if "compare" in s:
        c = s["compare"]
        console.print()
        if c.get("scored", 1):
            console.print(agreement(s))
        if c["examples"]:
            console.print()
            console.print(examples(s))

"""Structured output: JSON fields and markdown tables as statements about the answer (docs/verifier.md R1c).

A field or table row / column headed as the answer (`"answer"`, `"final_answer"`, `| Answer |`) is a marked
answer; one headed as another candidate (`"alternative"`, `"other_possible_answer"`, `| Backup |`) is a
candidate; any other field (`"confidence"`, `"unit"`, a table of cases) says nothing about the answer. Pure
functions; only text that holds a `"` or a `|` is read.
"""

from __future__ import annotations

import re

ANSWER, ALTERNATIVE = "answer", "alternative"
_ALT_WORDS = ("alternative", "alternate", "backup", "candidate", "possible", "other answer", "second answer", "或者",
              "备选", "其他答案", "другой")
_ANSWER_WORDS = ("answer", "réponse", "reponse", "antwort", "respuesta", "resposta", "risposta", "ответ", "答案", "答え",
                 "정답", "result")
_JSON_KEY = re.compile(r'"([^"\n]{1,40})"\s*:\s*')
_JSON_VALUE = re.compile(r'\[[^\]\n]{0,200}\]|"[^"\n]{0,200}"|[^,}\]\n]{1,200}')
_MARKUP = " \t*_`#"


def key_kind(key: str) -> str | None:
    """ANSWER, ALTERNATIVE or None for a field name or a table header (`final_answer`, `Other possible answer`)."""
    k = key.strip(_MARKUP).lower().replace("_", " ").replace("-", " ")
    if not k or len(k) > 40:
        return None
    if k == "alt" or any(w in k for w in _ALT_WORDS):
        return ALTERNATIVE
    if any(w in k for w in _ANSWER_WORDS):
        return ANSWER
    return None


def json_fields(t: str) -> list[tuple[int, str, int, str]]:
    """(position, kind, value position, value text) of the answer and alternative fields of JSON objects in t."""
    out: list[tuple[int, str, int, str]] = []
    if '"' not in t or ('":' not in t and '" :' not in t):
        return out
    for m in _JSON_KEY.finditer(t):
        kind = key_kind(m.group(1))
        if kind is None:
            continue
        v = _JSON_VALUE.match(t, m.end())
        if v is None:
            continue
        text = v.group(0).strip()
        if text.startswith('"') and text.endswith('"') and len(text) >= 2:
            out.append((m.start(), kind, v.start() + 1, text[1:-1]))
        elif text.startswith("[") and text.endswith("]"):
            out.append((m.start(), kind, v.start() + 1, text[1:-1]))
        else:
            out.append((m.start(), kind, v.start(), text))
        if len(out) >= 32:
            break
    return out


_SEPARATOR_ROW = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _cells(line: str, start: int) -> list[tuple[int, str]]:
    """(position in t, text) of the cells of one table row that starts at `start`."""
    cells, pos = [], start
    body = line
    lead = len(body) - len(body.lstrip())
    body = body.strip()
    pos += lead
    if body.startswith("|"):
        body, pos = body[1:], pos + 1
    if body.endswith("|"):
        body = body[:-1]
    i = 0
    for part in body.split("|"):
        cells.append((pos + i + len(part) - len(part.lstrip()), part.strip()))
        i += len(part) + 1
    return cells


def table_fields(t: str) -> list[tuple[int, str, int, str]]:
    """(position, kind, value position, value text) of answer and alternative cells of the markdown tables in t:
    a row whose first cell is a label (`| Answer | 34 |`) and a column whose header is one (`| Answer | Alt |`)."""
    out: list[tuple[int, str, int, str]] = []
    if "|" not in t:
        return out
    pos = 0
    header: list[str | None] | None = None
    for line in t.split("\n"):
        start, pos = pos, pos + len(line) + 1
        stripped = line.strip()
        if not stripped.startswith("|") or stripped.count("|") < 2:
            header = None
            continue
        if _SEPARATOR_ROW.match(stripped):
            continue
        cells = _cells(line, start)
        if header is None:  # the first row of a table: its cells head the columns
            header = [key_kind(c) for _, c in cells]
        else:
            for (p, text), kind in zip(cells, header, strict=False):
                if kind is not None and text:
                    out.append((p, kind, p, text))
        first = key_kind(cells[0][1]) if cells else None
        if first is not None and len(cells) > 1 and cells[1][1]:  # a labelled row
            out.append((cells[0][0], first, cells[1][0], cells[1][1]))
        if len(out) >= 32:
            break
    return out

"""Find the final answer of a model response. Pure functions, no I/O.

The rule (the same for training, both engines and evaluation: everything goes through `compute_score`) is written
once, in docs/verifier.md ("The rule: what a response commits to", R0-R5, and "The final-answer rule"): the final
output after the last `</think>`; the statements about the answer in it (`gspo_cli.rewards.statements`), each
with its mode and values (`gspo_cli.rewards.commit`); withdrawals; one committed value, and what the response
commits to last; the concluding statement when nothing is marked (`gspo_cli.rewards.prose`). The answer found is
compared with the ground truth by `gspo_cli.rewards.score.judge`.

Cost is linear in the response: one pass finds chat-template markers, marked answers are found by reverse
`str.rfind` scans of the last WINDOW characters of the final output, at most statements.MAX_LOOK markers of each
kind are read, every brace group and answer is length-capped, and the prose readers only read the last
PROSE_TAIL characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from gspo_cli.rewards import afterthoughts
from gspo_cli.rewards import statements as found_in
from gspo_cli.rewards.commit import CANDIDATE, COMMITTED, NEGATED, QUALIFIED, TERMINATOR, Statement, located_key
from gspo_cli.rewards.cues import APPROX, GE, GT, LE, LT, NE, RANGE
from gspo_cli.rewards.normalize import _ANSI, TOO_BIG, clean, parse_value
from gspo_cli.rewards.normalize import _MOJIBAKE as _NOISE_IN_TEXT
from gspo_cli.rewards.prose import concluding_statement, read_prose_answer

STYLES = ("dapo", "boxed")
WINDOW = 6000  # commitments are read in the last WINDOW characters of the final output (see `extract`)

_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "</s>", "<|im_start|>")
_LEAD_TOKEN = re.compile(r"\s*(?:<\|im_start\|>(?:assistant\s)?|<s>|<\|begin_of_text\|>)")
_WORD = re.compile(r"(?<![\\A-Za-z])[^\W\d_]{2,}")  # a word of letters, not a LaTeX command name


@dataclass(frozen=True)
class Extraction:
    """The answer text found (None when there is none) and how it was found, or why not."""

    answer: str | None
    how: str


def answer_region(text: str) -> tuple[str | None, str]:
    """The part of a response that may hold the final answer, or (None, reason).

    The chat-template markers are found by jumping from one `<` to the next (memchr speed); most responses
    hold none or a few.
    """
    m = _LEAD_TOKEN.match(text)
    if m and m.end() > 0:
        text = text[m.end() :]
    if "<" in text:
        cut, close, opened = len(text), -1, -1
        i = text.find("<")
        while 0 <= i < cut:
            if text.startswith("</think>", i):
                close, opened = i, -1
            elif text.startswith("<think>", i):
                opened = i
            elif text.startswith(_END_TOKENS, i):
                cut = i
                break
            i = text.find("<", i + 1)
        if close >= 0 or opened >= 0:
            if opened > close:
                return None, "unclosed_think"
            start = close + len("</think>") if close >= 0 else 0
            text = text[start:cut]
        else:
            text = text[:cut]
    if text.rstrip().endswith("|>"):
        # `...\boxed{42}im_end|>`: a chat-template token that lost its `<|`; the generation is corrupt.
        return None, "malformed_special_token"
    return text, "ok"


def _refine(content: str) -> str:
    """An `Answer:` line written as a sentence ("The volume of $V$ is 120."): keep the number it states.

    Only for real prose (two or more words); `Answer: eval('42')` or `Answer: 42{{{` stay as written and
    so are not read as 42.
    """
    if len(_WORD.findall(content)) < 2:
        return content
    r = read_prose_answer(content)
    return r if r is not None else content


def holds(op: str | None, v: str, bound: str) -> bool:
    """Whether a qualified statement (op, bound) is true of the committed value v (an estimate only when equal)."""
    a, b = parse_value(v), parse_value(bound)
    if op is None or not (isinstance(a, Fraction) and isinstance(b, Fraction)):
        return False
    return {GE: a >= b, GT: a > b, LE: a <= b, LT: a < b, NE: a != b, APPROX: a == b}.get(op, op == RANGE and False)


def _consistent(s: Statement, v: str) -> bool:
    """Whether a statement written after the first commitment is true of its value v (R4.2)."""
    if s.mode == CANDIDATE:
        return all(k == v for k in s.values)
    if s.mode == NEGATED:
        return v not in s.values
    if s.mode == QUALIFIED:
        return bool(s.values) and holds(s.op, v, s.values[0])
    return True


def _verdict(t: str, stmts: list[Statement]) -> tuple[Statement | None, str]:
    """The statement that decides (a committed one) after withdrawals and R4, or (None, why there is none)."""
    first_pos = stmts[0].pos if stmts else len(t)
    cut, named = afterthoughts.withdrawals(t, first_pos) if stmts else (-1, {})
    live = [s for s in stmts if s.pos >= cut and not any(k in named and s.pos < named[k] for k in s.values)]
    committed = [s for s in live if s.mode == COMMITTED and s.values]
    if not committed:
        modes = [s.mode for s in live if s.mode != "ignored"]
        why = modes[-1] if modes else ("withdrawn" if cut >= 0 or named else "no_answer")
        return None, {"committed": "empty_answer"}.get(why, why)
    keys = {k for s in committed for k in s.values}
    marks = [s for s in committed if s.kind in _MARKED] if len(keys) > 1 else []
    if len(marks) > 1:  # R1f: a marked answer on another named quantity than the last one's is not about the answer
        asked = _name(t, marks[-1])
        committed = [s for s in committed if s.kind not in _MARKED or _name(t, s) in ("", asked) or s is marks[-1]]
        keys = {k for s in committed for k in s.values}
    if len(keys) > 1:
        return None, "conflict"
    v = next(iter(keys))
    first = min(s.pos for s in committed)
    # after the first commitment every statement must be true of v; a marked candidate (a hedged box or
    # answer line: the response's own answer form) must be v wherever it stands
    later = [s for s in live if s.mode in (CANDIDATE, NEGATED, QUALIFIED)
             and (s.pos > first or (s.mode == CANDIDATE and s.kind in _MARKED))]
    end = TERMINATOR.search(t, first)  # remarks are read after the first commitment's sentence
    later += afterthoughts.remarks(t, end.end() if end else len(t), [s.pos for s in stmts])
    for s in later:
        if not _consistent(s, v):
            return None, "contradicted" if s.mode != CANDIDATE else "second_candidate"
    return committed[-1], "ok"


_MARKED = ("line", "box", "field")
_VAR = r"[A-Za-z]{1,2}(?:_\{?\w{1,3}\}?)?(?:\^\{?\w\}?)?"  # a named quantity: `m`, `a_8`, `BD^2`, `p + q`
_NAMED = re.compile(r"(?<![\\\w{}])(" + _VAR + r"(?:\s*[+\-]\s*" + _VAR + r")*)\s*=\s*\$?\s*\\?$")


def _name(t: str, s: Statement) -> str:
    """The quantity a marked answer is attached to (`m = \\boxed{5}`, `\\boxed{m = 5}`, `Answer: m + n = 23`), or ''."""
    head = t[t.rfind("\n", 0, s.pos) + 1:s.pos] if s.kind == "box" else ""
    m = _NAMED.search(head) or _NAMED.match(clean(s.content).split("=", 1)[0] + "=") if "=" in head + s.content else None
    return m.group(1).replace(" ", "") if m else ""


_MARKUP_LINE = re.compile(r"[ \t$*_#>`.\\\[\]{}()]*")


def _quick(t: str, stmts: list[Statement]) -> bool:
    """Plain statements (an integer alone on its line) of one value, and nothing after the first but markup:
    no withdrawal, candidate or qualifier can be there, so the full reading would decide the same."""
    v = stmts[0].values
    if not all(s.plain and s.mode == COMMITTED and s.values == v for s in stmts) or len(v) != 1:
        return False
    start = stmts[0].pos
    pos = start
    k = 0
    for line in t[start:].split("\n"):
        end = pos + len(line)
        while k < len(stmts) and stmts[k].pos < pos:
            k += 1
        if not (k < len(stmts) and stmts[k].pos <= end) and not _MARKUP_LINE.fullmatch(line):
            return False
        pos = end + 1
    return True
_LEAD_VALUE = re.compile(r"(?:-?\d+|[A-Za-z][A-Za-z -]*?)(?=\s*[,;)(—–]|\s|$)")  # a value starting the text, a remark


_HOW = {"line": "answer_line", "box": "boxed", "field": "field"}


def _stated(text: str, v: tuple[str, ...]) -> str:
    """The one value v a text states when the text itself is no value but starts with it (`23 (as computed
    above)`, `23, not 32`, `23 is the answer`, `16 (sixteen)`, `seven (7)`); else the text."""
    c = clean(text)
    if len(v) != 1 or parse_value(c) is not None:
        return text
    lead = _LEAD_VALUE.match(c)
    return v[0] if lead is not None and located_key(lead.group(0)) == v[0] else text


def _pick(stmts: list[Statement], v_stmt: Statement, style: str) -> tuple[str, str]:
    """(answer text, how) of the committed marked answer the style prefers: DAPO's `Answer:` line or a box."""
    order = ("line", "box", "field") if style == "dapo" else ("box", "line", "field")
    v = v_stmt.values
    for kind in order:
        cands = [s for s in stmts if s.kind == kind and s.mode == COMMITTED and s.values == v]
        if cands:
            s = cands[-1]
            how = _HOW[kind]
            if s.plain:  # a plain integer alone on its line: its value is the answer text
                return v[0], how
            text = _stated(_refine(s.content) if kind == "line" else s.content, v)
            if kind == "line" and parse_value(clean(text)) is None:
                # `Answer: 12Thus, the answer is $\boxed{12}$.` (the line's text, cut before its box, is no value):
                # the line's value is the one committed, so a later committed box of that value states it
                box = next((b for b in stmts if b.kind == "box" and b.mode == COMMITTED and b.values == v
                            and b.pos > s.pos), None)
                if box is not None:
                    text = box.content
            return text, how
    return v[0], "prose:" + v_stmt.kind


def _from_prose(t: str, numeric: bool, stmts: list[Statement]) -> Extraction:
    """No marked answer: the concluding statement (R1e), judged with the answer sentences like any statement."""
    answer, how = concluding_statement(t)
    if answer is None:
        committed = [s for s in stmts if s.mode == COMMITTED]
        if not committed and stmts:
            return Extraction(None, next((s.mode for s in reversed(stmts) if s.mode != "ignored"), how))
        return Extraction(None, how)
    own = found_in.prose_statement(t, answer, stmts)
    if own is not None:
        if own.mode != COMMITTED and (numeric or own.op is None):
            return Extraction(None, own.mode)
        stmts = sorted([s for s in stmts if s.pos != own.pos] + [own], key=lambda s: s.pos)
    chosen, why = _verdict(t, stmts)
    if chosen is None:
        return Extraction(None, why)
    return Extraction(_stated(answer, own.values) if own is not None else answer, how)


def _concluding_after(t: str, last: int, stmts: list[Statement]) -> Statement | None:
    """The statement that ends the response after its last marked answer, when it concludes ("so the total is
    35."): what the response commits to last is read like every commitment (R1e)."""
    tail = t.find("\n", last)
    answer, how = concluding_statement(t[tail:]) if tail >= 0 and afterthoughts._DIGIT_OR_CJK.search(t, tail) else (None, "")
    if answer is None or how not in ("prose:conclusion", "prose:answer_phrase"):
        return None
    own = found_in.prose_statement(t, answer, stmts)
    return own if own is not None and all(st.pos != own.pos for st in stmts) else None


def _decide(t: str, style: str, numeric: bool) -> Extraction:
    """The one committed value among the statements of t, or why there is none (docs/verifier.md R1-R4)."""
    f = found_in.find(t, numeric)
    stmts = f.statements
    if stmts and f.unclosed < 0 and _quick(t, stmts):  # one plain value, said plainly, nothing around it
        answer, how = _pick(stmts, stmts[-1], style)
        return Extraction(answer, how)
    marked = [s for s in stmts if s.kind in ("line", "box", "field")]
    after = _concluding_after(t, marked[-1].pos, stmts) if marked else None  # statements are in order
    if after is not None:
        stmts = sorted(stmts + [after], key=lambda s: s.pos)
    if not marked:
        if f.unclosed >= 0:  # "So the final answer is $\\boxed{34": cut off inside the box
            return Extraction(None, "unclosed_box")
        return _from_prose(t, numeric, stmts)
    if f.unclosed > max(s.pos for s in marked):  # `Answer: 36 ... \\boxed{3` cut off: no answer
        return Extraction(None, "unclosed_box")
    if f.flood and len({k for s in marked for k in s.values}) > 1:
        return Extraction(None, "too_many_answers")
    chosen, why = _verdict(t, stmts)
    if chosen is None:
        if why in ("withdrawn", "refusal"):
            cut, _ = afterthoughts.withdrawals(t, stmts[0].pos)
            if cut >= 0 and t[cut:].strip():  # "Answer: 36. Actually, I cannot determine ...": what follows
                late, late_how = concluding_statement(t[cut:])
                return Extraction(late, late_how if late is not None else "refusal")
            return Extraction(None, "refusal")
        if why == "empty_answer" or all(not clean(s.content) for s in marked if s.mode == COMMITTED):
            return Extraction(None, "empty_answer") if why in ("empty_answer", "no_answer") else Extraction(None, why)
        return Extraction(None, why)
    if chosen.kind not in _MARKED:  # marked answers exist: the value must be stated by one of them
        committed_marked = [s for s in marked if s.mode == COMMITTED and s.values]
        if not committed_marked:
            modes = [s.mode for s in marked if s.mode not in ("ignored", COMMITTED)]
            return Extraction(None, modes[-1] if modes else "empty_answer")
    answer, how = _pick(stmts, chosen, style)
    return Extraction(answer, how)


# Label forms read as the `Answer:` label (R1a): answer tags, GSM8K's `####` before a value (a markdown heading
# "#### Step 2" is none); HTML comments are no statement.
_TAGS = re.compile(r"<!--.*?-->|(?i:<(/?)answer>)|(?<!#)####(?=[ \t]*[-+$\\\d])", re.S)


def _tag(m: re.Match) -> str:
    return "Answer:" if m.group(0)[0] == "#" else " " if m.lastindex is None else "\n" if m.group(1) else "\nAnswer: "


def _denoise(t: str) -> str:
    """Terminal colour codes and UTF-8 read as Latin-1 removed around markers (`\x1b[1mAnswer:`, `ï»¿Answer:`);
    label forms as the `Answer:` label."""
    if "\x1b" in t or (not t.isascii() and ("\u00ef\u00bb\u00bf" in t or "\u00e2\u20ac" in t or "\u00c2" in t)):
        t = _NOISE_IN_TEXT.sub(" ", _ANSI.sub("", t))
    if ("#" in t and "####" in t) or ("<" in t and ("<!--" in t or "nswer>" in t or "NSWER>" in t)):
        t = _TAGS.sub(_tag, t)
    return t


def extract(text: str, style: str = "dapo", numeric: bool = True) -> Extraction:
    """The final answer of a response and how it was found, or why there is none (see the module docstring).

    Commitments are read in the last WINDOW characters of the final output (all of it when none are there): a
    commitment further back cannot make a wrong final answer right, so ignoring it pays a hedging policy
    nothing, and the scan stays as cheap as verl's math_dapo. `numeric`: the ground truth is a number, so a
    bound or an estimate is no value (R2d); for a symbolic truth (`x \\le 3`) it is the answer itself.
    """
    if style not in STYLES:
        raise ValueError(f"unknown answer style {style!r}; expected one of {STYLES}")
    t, why = answer_region(text)
    if t is None:
        return Extraction(None, why)
    ex = _decide(_denoise(t[-WINDOW:]), style, numeric)
    if len(t) > WINDOW and ex.answer is None and ex.how in ("no_answer", "truncated", "empty"):
        # rare: a marked answer followed by more than WINDOW characters; look for one further back
        edge = len(t) - WINDOW + 16
        back = max(t.rfind("nswer", 0, edge), t.rfind("box", 0, edge),
                   -1 if t.isascii() else max(t.rfind("答", 0, edge), t.rfind("：", 0, edge)))
        if back >= 0:
            rare = _decide(_denoise(t[max(0, back - WINDOW // 2):back + WINDOW]), style, numeric)
            if rare.answer is not None or rare.how not in ("no_answer", "truncated", "empty"):
                return rare
    return ex


def extract_answer(text: str, style: str = "dapo") -> str | None:
    """The final answer text of a response, or None (see `extract`)."""
    return extract(text, style).answer


__all__ = ["Extraction", "STYLES", "TOO_BIG", "answer_region", "extract", "extract_answer", "read_prose_answer"]

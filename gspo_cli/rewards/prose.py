"""Concluding statements and refusals: the prose half of the final-answer rule (see `gspo_cli.rewards.extract`).

Read only when a response has no `Answer:` line and no `\\boxed{}`, and only in its last PROSE_TAIL
characters. A concluding statement must *end* the response: after it comes nothing but punctuation (or, for
an answer phrase or a "therefore" sentence, one closing remark such as "I hope it is correct."). A response
that stops mid-sentence was cut off by the length limit: it states no conclusion, except a short one whose
last sentence says "the answer is N" or whose last line is a number. A refusal ("I cannot determine the
answer") voids everything written before it.

Pure functions, no I/O; linear regexes on bounded text.
"""

from __future__ import annotations

import re
from fractions import Fraction

from gspo_cli.rewards.latex import MAX_ANSWER_CHARS
from gspo_cli.rewards.normalize import clean, parse_number, parse_value, prose_numbers, rhs

PROSE_TAIL = 1000
SHORT_RESPONSE = 300
MAX_CLOSING = 200  # a closing remark after a conclusion is short
_LAST_LINES = 600  # characters read for the last lines (a number line, the line above it)
MAX_WHOLE_WORDS = 7  # a response that is an answer: "42", "x = 3", "42 because geometry proves it"

_OPENERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？।\n]")
# Prose markers are searched in the lower-cased tail with literal-first patterns (fast in `re`), and word
# boundaries are checked by hand: `(?i)\b...` patterns make `re` try every position.
_ANSWER_WORDS = ("answer", "result", "réponse", "respuesta", "antwort", "resposta", "risposta", "ответ", "答案", "答え",
                 "정답")
_PROSE_SUFFIX = re.compile(r"\s{0,3}(?:is|est|es|ist|é|è|равен|是|为|は|은|would\s+be|will\s+be|=|:|：)(?![a-z])")
_INNER_MARK = re.compile(r"(?i)\b(?:answer|result|réponse)\s{0,3}(?:is|est|es|=|:)\s*")
_CONCLUSION_WORDS = ("therefore", "thus", "hence", "so", "consequently", "donc", "alors", "daher", "also", "entonces")
_CONCLUSION_CJK = ("因此", "所以", "故", "结论", "总共", "一共", "لذا", "إذن", "इसलिए", "अतः")  # no word boundary
_BRACKET = re.compile(r"\[([^\[\]\n]{1,80})\](?=[\s.,;:!?]|$)")
_DOLLAR_SPAN = re.compile(r"\$([^$]{1,200})\$")
_PAREN_SPAN = re.compile(r"\\\(([^$]{1,200}?)\\\)")
_COMPLETE_END = tuple(".!?。！？।$)]}*")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d,])")
_LIST = re.compile(r"\d\s*(?:[,;]|\band\b|或|和|\bet\b|\by\b|\bund\b)\s*[-+]?\d")
_HEDGE_OR = re.compile(r"(?i)\d\s*(?:,?\s*or|或|oder|ou|o)\s+\S*\d")
_EDGE = " \t\r\n.!?。！？*$)]}"  # punctuation and closers around a statement or a remark
_CLOSING_REMARK = re.compile(
    r"(?:i |we )?hope (?:it|this|that) (?:is (?:correct|right|helpful|clear)|helps)"
    r"|this (?:completes|concludes) the (?:proof|solution|problem)"
    r"|(?:that|this) is (?:the|my) (?:final )?answer|q\.?e\.?d|∎|□|done"
)
# "I cannot determine the answer", "cannot be determined", "unable to solve", "I don't know", "无法确定".
# Lower-case only and searched in lower-cased text: `re` then skips ahead on the possible first characters.
_REFUSAL = re.compile(
    r"(?:can ?not|can['’]t|could ?not|couldn['’]t|unable to|not able to)\s+(?:be\s+)?"
    r"(?:determined?|solved?|answer(?:ed)?|found|finish(?:ed)?|complete(?:d)?|work(?:ed)? (?:it )?out|"
    r"figure(?:d)? (?:it )?out|find\s+(?:the|an?)\s+(?:answer|solution|value))"
    r"|i\s+(?:do\s+not|don['’]t)\s+know|(?:not enough|insufficient)\s+information|i give up|ran out of time"
    r"|无法(?:确定|求解|解答|回答|计算|得出|完成)|不知道|做不出"
)
# Every refusal holds one of these ("not ", "n't ", "unable ", "insufficient", 无法, 不知道): one C-speed scan
# that "note" or "another" do not trigger. Written as `[first characters](?:(?<=c)rest|...)`, which matches exactly
# where `[nN](?:[oO][tT]|...)\s|[nN][sS][uU][fF]|[gG]ive up|...` does (tests/rewards/test_scan_patterns.py): a
# pattern that starts with a character set lets `re` skip ahead to those characters (3x faster on a 1,000-character
# tail) instead of trying the whole pattern at every position.
_REFUSAL_HINT = re.compile(r"[nNgGrR无不做](?:(?<=[nN])(?:[oO][tT]|['’][tT]|[aA][bB][lL][eE])\s|(?<=[nN])[sS][uU][fF]"
                           r"|(?<=[gG])ive up|(?<=[rR])an out|(?<=无)法|(?<=不)知道|(?<=做)不出)")
REFUSAL_TAIL = 300  # a prose answer must end the response, so a refusal that matters is near the end


def take_content(t: str, start: int) -> str:
    """The answer written after a marker: a delimited math block, else the rest of the line (or the next line).

    `\\text{Answer: } 7`: the `}` closing the label's text group is skipped, so the content is `7`.
    """
    return content_at(t, start)[1]


def content_at(t: str, start: int) -> tuple[int, str]:
    """(where it starts in t, the content) of the answer written after a marker (see take_content)."""
    n = len(t)
    i = start
    while i < n and t[i] in " \t*_":
        i += 1
    if i < n and t[i] == "}":
        i += 1
    if i < n and t[i] in "\r\n":  # `Answer:\n\\boxed{42}`
        k = i
        while k < n and k - i < 200 and t[k] in " \t\r\n*_":
            k += 1
        i = k
        while t.startswith(("- ", "• "), i):  # a list under the label: its last item is the answer (R1f)
            e = t.find("\n", i, i + MAX_ANSWER_CHARS)
            if e < 0 or not t.startswith(("- ", "• "), e + 1):
                i += 2
                break
            i = e + 1
    for o, c in _OPENERS:
        if t.startswith(o, i):
            e = t.find(c, i + len(o), i + MAX_ANSWER_CHARS)
            if e >= 0:
                line_end = t.find("\n", e + len(c), e + len(c) + MAX_ANSWER_CHARS)
                return i, t[i : line_end if line_end >= 0 else e + len(c) + MAX_ANSWER_CHARS]
            break
    e = t.find("\n", i, i + MAX_ANSWER_CHARS)
    return i, t[i : e if e >= 0 else i + MAX_ANSWER_CHARS]


def refusal_end(t: str, start: int = 0) -> int:
    """Index just past the sentence holding the last refusal in t[start:], or -1 when there is none."""
    seg = t[start:] if start else t
    if not _REFUSAL_HINT.search(seg):
        return -1
    last = None
    for m in _REFUSAL.finditer(_lower(seg)):
        last = m
    if last is None:
        return -1
    e = _SENTENCE_END.search(seg, last.end())
    return start + (e.end() if e else len(seg))


def _sentence(t: str, start: int) -> str:
    m = _SENTENCE_END.search(t, start, start + MAX_ANSWER_CHARS)
    return t[start : m.start() if m else start + MAX_ANSWER_CHARS]


def _math_spans(s: str) -> list[str]:
    return [m.group(1) for m in _DOLLAR_SPAN.finditer(s)] + [m.group(1) for m in _PAREN_SPAN.finditer(s)]


def read_prose_answer(content: str, first: bool = True) -> str | None:
    """A number out of a sentence: `x = 42` -> 42, `The volume is 120. I hope...` -> 120.

    first=True reads the value an answer phrase introduces (the first one after it); first=False the value a
    conclusion ends on (the last one in the sentence).
    """
    if len(content) > MAX_ANSWER_CHARS:
        return None
    c = clean(content)
    if not c:
        return None
    if parse_value(c) is not None:
        return c
    s = _sentence(content, 0)
    inner = list(_INNER_MARK.finditer(s))
    if inner:  # "Final Answer: The final answer is 12": read after the last inner marker
        s = s[inner[-1].end() :]
    spans = _math_spans(s)
    if spans:
        span = clean(spans[0] if first else spans[-1])
        if parse_value(span) is not None:
            return rhs(span)
    s = clean(s)
    if "=" in s or "\\approx" in s:
        s = rhs(s)
        first = True
    v = parse_value(s.strip())
    if v is not None:
        return s.strip()
    if _HEDGE_OR.search(s) or _LIST.search(_GROUPED.sub("N", s)):
        return None  # "3 or 4", "5, 6, 7": candidates, not an answer
    nums = prose_numbers(s)
    if not nums:
        return None
    return nums[0] if first else nums[-1]


def _is_final(rest: str, remark_ok: bool) -> bool:
    """Whether a statement followed by `rest` ends the response: only punctuation, or (remark_ok) closing remarks."""
    r = rest.strip(_EDGE)
    if not r:
        return True
    if not remark_ok or len(r) > MAX_CLOSING:
        return False
    parts = (p.strip(_EDGE) for p in _SENTENCE_END.split(r.lower()))
    return all(not p or _CLOSING_REMARK.fullmatch(p) for p in parts)


def _bounded(low: str, i: int, n: int) -> bool:
    if not low[i:i + 1].isascii() and low[i:i + 1] not in "réо":  # 答案, 答え, 정답: scripts without spaces
        return True
    return (i == 0 or not low[i - 1].isalnum()) and (i + n >= len(low) or not low[i + n].isalnum())


def _last_conclusion(low: str) -> int:
    """End index of the last conclusion word ("therefore", "所以", ...) in low, or -1."""
    best = -1
    for w in _CONCLUSION_WORDS:
        i = low.rfind(w)
        while i >= 0 and not _bounded(low, i, len(w)):
            i = low.rfind(w, 0, i)
        if i >= 0 and i + len(w) > best:
            best = i + len(w)
    if not low.isascii():
        for w in _CONCLUSION_CJK:
            i = low.rfind(w)
            if i >= 0 and i + len(w) > best:
                best = i + len(w)
    return best


def _lower(tail: str) -> str:
    low = tail.lower()
    if len(low) != len(tail):  # a rare character whose lower case is longer: keep positions aligned
        low = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in tail)
    return low


def _answer_marks(low: str) -> list[int]:
    """End positions of the last few answer words ("answer", "result", ...) standing as words, in order."""
    ends: list[int] = []
    for w in _ANSWER_WORDS:
        i = low.rfind(w)
        while i >= 0 and len(ends) < 16:
            if _bounded(low, i, len(w)):
                ends.append(i + len(w))
            i = low.rfind(w, 0, i)
    return sorted(ends)[-5:]


VALUE_FIRST = re.compile(r"(?:^|(?<=[\n.!?:]))[ \t*$]*([+-]?\d[\d,]*)[ \t*$]*(?:is|was) (?:the |my |our )?(?:final )?"
                         r"answer$", re.I)  # "34 is the final answer": an answer sentence that begins with the value


def _answer_phrase(tail: str, low: str) -> str | None:
    """ "the answer is 42", "Answer $9$", "réponse est (35 + 70 = 105)", "42 is the answer": the last one, when it
    ends the response."""
    for mark_end in reversed(_answer_marks(low)):
        first = VALUE_FIRST.search(tail, max(0, mark_end - 50), mark_end)
        if first is not None and _is_final(tail[mark_end:], remark_ok=True):
            return first.group(1)
        sm = _PROSE_SUFFIX.match(low, mark_end)
        end = sm.end() if sm else mark_end
        span = take_content(tail, end)
        if not span.lstrip().startswith(("$", "\\(", "\\[")):
            span = _sentence(tail, end)
        r = read_prose_answer(span)
        if r is not None:
            at = tail.find(span, end)
            return r if _is_final(tail[at + len(span) :], remark_ok=True) else None
    return None


def _last_line(t: str) -> str | None:
    """A last line that is a bare number, unless the line above is one too (a column of candidates)."""
    seg = t[-_LAST_LINES:].rstrip()
    if len(t) > _LAST_LINES and "\n" not in seg:  # the last line is longer than a number line ever is
        return None
    lines = [ln for ln in seg.rsplit("\n", 3)[-3:] if ln.strip()]
    if not lines:
        return None
    c = clean(lines[-1])
    if parse_number(rhs(c), allow_tail=False) is None:
        return None
    if len(lines) > 1 and parse_number(clean(lines[-2]), allow_tail=False) is not None:
        return None
    return c


def _whole(t: str) -> str | None:
    """A short response that is itself an answer: "42", "x = 3", "42 because geometry proves it"."""
    c = clean(t)
    if parse_value(c) is None:
        return None
    body = rhs(c).rstrip(_EDGE)
    # "36 is the area. The rest..." or "36 This is only the area of the first rectangle" is a sentence
    if _SENTENCE_END.search(body) or len(body.split()) > MAX_WHOLE_WORDS:
        return None
    return c


def _final_weak(tail: str, low: str) -> tuple[str | None, str]:
    """The weak readers of a complete response: a final `[N]`, a "therefore ... N" sentence, a final `$...$`."""
    end_chars = tail.rstrip(" \t\r\n.!?。！？*")[-3:]  # a final bracket or span closes within these
    if "]" in end_chars:
        brackets = [m for m in _BRACKET.finditer(tail) if m.start() == 0 or tail[m.start() - 1].isspace()]
        if brackets and _is_final(tail[brackets[-1].end() :], remark_ok=False):
            c = clean(brackets[-1].group(1))
            if isinstance(parse_value(c), (Fraction, str)):
                return c, "prose:bracket"
    end = _last_conclusion(low)
    if end >= 0:
        sentence = _sentence(tail, end)
        r = read_prose_answer(sentence, first=False)
        if r is not None and _is_final(tail[end + len(sentence) :], remark_ok=True):
            return r, "prose:conclusion"
    if "$" in end_chars:
        spans = list(_DOLLAR_SPAN.finditer(tail))
        if spans and _is_final(tail[spans[-1].end() :], remark_ok=False):
            c = clean(spans[-1].group(1))
            if parse_value(c) is not None:
                return c, "prose:math_span"
            nums = prose_numbers(c)
            if len(nums) == 1:
                return nums[0], "prose:math_span"
    return None, "no_answer"


def concluding_statement(t: str) -> tuple[str | None, str]:
    """(answer, how) read from the prose at the end of t, or (None, why not)."""
    tail = t[-PROSE_TAIL:]
    # Only what is written after a refusal can be an answer. A prose answer must end the response, so only
    # a refusal in the last REFUSAL_TAIL characters can come after it.
    cut = refusal_end(tail, max(0, len(tail) - REFUSAL_TAIL))
    if cut >= 0:
        t = tail = tail[cut:]
        if not tail.strip():
            return None, "refusal"
    stripped = tail.strip()
    if not stripped:
        return None, "empty"
    short = len(t.strip()) <= SHORT_RESPONSE
    complete = stripped.endswith(_COMPLETE_END)
    if not (short or complete):  # a long response cut off mid-sentence by the length limit
        r = _last_line(t)
        return (r, "prose:last_line") if r is not None else (None, "truncated")
    low = _lower(tail)
    r = _answer_phrase(tail, low)
    if r is not None:
        return r, "prose:answer_phrase"
    if short:
        r = _whole(t)
        if r is not None:
            return r, "prose:whole"
    r = _last_line(t)
    if r is not None:
        return r, "prose:last_line"
    if not complete:
        return None, "truncated"
    return _final_weak(tail, low)


__all__ = ["PROSE_TAIL", "SHORT_RESPONSE", "concluding_statement", "read_prose_answer", "refusal_end", "take_content"]

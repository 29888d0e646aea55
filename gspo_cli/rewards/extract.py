"""Find the final answer in a model response. Pure functions, no I/O.

Order of evidence (style "dapo"): the last `Answer:` line, then the last `\\boxed{}`/`\\fbox{}`; style "boxed"
swaps those two. Only when neither exists do the prose readers run, on the tail of the response: "the answer
is N", a response that *is* a number, a last line that is a number, a `[N]` answer, the last "therefore ...
N" sentence, the last `$...$` span. Qwen3 thinking output counts only after `</think>`; an unclosed
`<think>` is a truncated response. A response that keeps changing its marked answer (more than two
changes) is hedging and has no answer.

Cost is linear in the response and mostly independent of its length: one regex pass finds chat-template
markers, marked answers are looked for in the last WINDOW characters (the whole text only when there are
none), at most 16 candidates of each kind are read, every brace group and answer is length-capped, and the
prose readers only look at the last PROSE_TAIL characters of a response that ends where a sentence ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from gspo_cli.rewards.normalize import (
    MAX_ANSWER_CHARS,
    TOO_BIG,
    clean,
    find_group_end,
    normalize,
    parse_number,
    parse_value,
    prose_numbers,
    rhs,
)

STYLES = ("dapo", "boxed")
MAX_CANDIDATES = 16  # per kind; enough to see hedging, bounded cost on floods of markers
MAX_CHANGES = 2  # "revised once or twice" is fine; more is listing candidates
PROSE_TAIL = 1000
WINDOW = 6000  # marked answers are looked for in the last WINDOW characters: the end is where answers are
SHORT_RESPONSE = 300
_MAX_LOOK = 256  # marker-word occurrences inspected per kind (a flood of "answer" words costs nothing more)

_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "</s>", "<|im_start|>")
_MARKERS = re.compile(r"</?think>|<\|(?:im_end|endoftext|eot_id|end_of_text|end|im_start)\|>|</s>")
_LEAD_TOKEN = re.compile(r"\s*(?:<\|im_start\|>(?:assistant\s)?|<s>|<\|begin_of_text\|>)")
# (tail searched for, heads that may precede it): "Answer", "answer", "ANSWER", "Réponse", "答案".
_TAILS = (("nswer", ("a", "A")), ("NSWER", ("A",)))
_NON_ASCII_TAILS = (("éponse", ("r", "R")), ("ÉPONSE", ("R",)), ("案", ("答",)), ("espuesta", ("r", "R")))
_COLON = re.compile(r"[ \t*_]{0,6}[:：]")
_OPENERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？।\n]")
# Prose markers are searched in the lower-cased tail with literal-first patterns (fast in `re`), and word
# boundaries are checked by hand: `(?i)\b...` patterns make `re` try every position.
_PROSE_WORD = re.compile(r"(?:answer|result|réponse|respuesta)\b")
_PROSE_SUFFIX = re.compile(r"\s{0,3}(?:is|est|es|would\s+be|will\s+be|=|:|：)(?![a-z])")
_INNER_MARK = re.compile(r"(?i)\b(?:answer|result|réponse)\s{0,3}(?:is|est|es|=|:)\s*")
_CONCLUSION_WORDS = ("therefore", "thus", "hence", "so", "consequently", "donc", "alors", "daher", "also", "entonces")
_CONCLUSION_CJK = ("因此", "所以", "故", "结论", "总共", "一共", "لذا", "إذن", "इसलिए", "अतः")  # no word boundary
_BRACKET = re.compile(r"\[([^\[\]\n]{1,80})\](?=[\s.,;:!?]|$)")
_DOLLAR_SPAN = re.compile(r"\$([^$]{1,200})\$")
_PAREN_SPAN = re.compile(r"\\\(([^$]{1,200}?)\\\)")
_WORD = re.compile(r"(?<![\\A-Za-z])[^\W\d_]{2,}")  # a word of letters, not a LaTeX command name
_COMPLETE_END = tuple(".!?。！？।$)]}*")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d,])")
_LIST = re.compile(r"\d\s*(?:[,;]|\band\b|或|和|\bet\b|\by\b|\bund\b)\s*[-+]?\d")
_HEDGE_OR = re.compile(r"(?i)\d\s*(?:,?\s*or|或|oder|ou|o)\s+\S*\d")


@dataclass(frozen=True)
class Extraction:
    """The answer text found (None when there is none) and how it was found, or why not."""

    answer: str | None
    how: str


def answer_region(text: str) -> tuple[str | None, str]:
    """The part of a response that may hold the final answer, or (None, reason).

    One regex pass finds every chat-template marker; most responses have none and cost just that pass.
    """
    m = _LEAD_TOKEN.match(text)
    if m and m.end() > 0:
        text = text[m.end() :]
    marks = [(mm.start(), mm.group(0)) for mm in _MARKERS.finditer(text)] if "<" in text else []
    if marks:
        cut = next((i for i, tok in marks if tok in _END_TOKENS), len(text))
        text = text[:cut]
        close = [i for i, tok in marks if tok == "</think>" and i < cut]
        start = close[-1] + len("</think>") if close else 0
        if any(tok == "<think>" and start <= i < cut for i, tok in marks):
            return None, "unclosed_think"
        text = text[start:]
    if text.rstrip().endswith("|>"):
        # `...\boxed{42}im_end|>`: a chat-template token that lost its `<|`; the generation is corrupt.
        return None, "malformed_special_token"
    return text, "ok"


def _take_content(t: str, start: int) -> str:
    """The answer written after a marker: a delimited math block, else the rest of the line (or the next line)."""
    n = len(t)
    i = start
    while i < n and t[i] in " \t*_":
        i += 1
    if i < n and t[i] in "\r\n":  # `Answer:\n\\boxed{42}`
        k = i
        while k < n and k - i < 200 and t[k] in " \t\r\n*_":
            k += 1
        i = k
    for o, c in _OPENERS:
        if t.startswith(o, i):
            e = t.find(c, i + len(o), i + MAX_ANSWER_CHARS)
            if e >= 0:
                line_end = t.find("\n", e + len(c), e + len(c) + MAX_ANSWER_CHARS)
                rest = t[e + len(c) : line_end if line_end >= 0 else e + len(c) + MAX_ANSWER_CHARS]
                return t[i : e + len(c)] + rest
            break
    e = t.find("\n", i, i + MAX_ANSWER_CHARS)
    return t[i : e if e >= 0 else i + MAX_ANSWER_CHARS]


def answer_lines(t: str) -> list[tuple[int, str]]:
    """(position, content) of every `Answer:` marker (answer/Answer/ANSWER, markdown allowed), last MAX_CANDIDATES.

    Searched without lower-casing the text (a copy of it): the tails "nswer"/"NSWER" are found in C, the first
    letter and the colon are checked at each hit.
    """
    found: list[tuple[int, str]] = []
    words = _TAILS if t.isascii() else _TAILS + _NON_ASCII_TAILS
    for tail, heads in words:
        i = t.rfind(tail)
        hits = looked = 0
        while i >= 0 and hits < MAX_CANDIDATES and looked < _MAX_LOOK:
            looked += 1
            h = i - len(heads[0])
            if h >= 0 and t[h:i] in heads:
                m = _COLON.match(t, i + len(tail))
                if m:
                    found.append((h, _take_content(t, m.end())))
                    hits += 1
            i = t.rfind(tail, 0, i)
    i = t.rfind("####")  # GSM8K's final-answer marker; a markdown heading ("#### Step 2") is not one
    if i >= 0 and (i == 0 or t[i - 1] != "#"):
        content = _take_content(t, i + 4)
        if parse_value(clean(content)) is not None:
            found.append((i, content))
    found.sort()
    return found[-MAX_CANDIDATES:]


def boxed_answers(t: str) -> list[tuple[int, str]]:
    """(position, inner text) of the last `\\boxed{..}` / `\\fbox{..}` groups (nested braces allowed)."""
    found: list[tuple[int, str]] = []
    i = t.rfind("box")  # one reverse scan serves both commands
    looked = 0
    while i >= 0 and len(found) < MAX_CANDIDATES and looked < _MAX_LOOK:
        looked += 1
        if t.startswith("boxed", i):
            j = i + 5
        elif i > 0 and t[i - 1] == "f":
            j = i + 3
        else:
            i = t.rfind("box", 0, i)
            continue
        if j < len(t) and t[j] == "{":
            end = find_group_end(t, j, MAX_ANSWER_CHARS)
            if end > 0:
                found.append((i, t[j + 1 : end]))
        elif j < len(t) and t[j] == " ":  # `\boxed 42`
            m = re.match(r" +([^\s$]{1,40})", t[j : j + 64])
            if m:
                found.append((i, m.group(1)))
        i = t.rfind("box", 0, i)
    found.reverse()
    return found


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


def _refine(content: str) -> str:
    """An `Answer:` line written as a sentence ("The volume of $V$ is 120."): keep the number it states.

    Only for real prose (two or more words); `Answer: eval('42')` or `Answer: 42{{{` stay as written and
    so are not read as 42.
    """
    if len(_WORD.findall(content)) < 2:
        return content
    r = read_prose_answer(content)
    return r if r is not None else content


def _hedged(cands: list[tuple[int, str]]) -> bool:
    keys: list[str] = []
    for _, c in cands:
        k = normalize(c)
        if k and (not keys or keys[-1] != k):
            keys.append(k)
    return len(keys) - 1 > MAX_CHANGES


def _bounded(low: str, i: int, n: int) -> bool:
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


def _prose(t: str) -> Extraction:
    tail = t[-PROSE_TAIL:]
    stripped = tail.strip()
    if not stripped:
        return Extraction(None, "empty")
    short = len(t.strip()) <= SHORT_RESPONSE
    whole = t.rstrip()
    last_line = whole[whole.rfind("\n") + 1 :]
    # A long response cut off mid-sentence by the length limit has no conclusion to read: of the prose
    # readers only "the last line is a number" applies to it.
    if not (short or stripped.endswith(_COMPLETE_END)):
        c = clean(last_line)
        if parse_number(rhs(c), allow_tail=False) is not None:
            return Extraction(c, "prose:last_line")
        return Extraction(None, "no_answer")
    low = tail.lower()
    if len(low) != len(tail):  # a rare character whose lower case is longer: keep positions aligned
        low = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in tail)
    # "the answer is 42", "Answer $9$", "réponse est (35 + 70 = 105)"
    marks = [m for m in _PROSE_WORD.finditer(low) if m.start() == 0 or not low[m.start() - 1].isalnum()]
    for m in reversed(marks[-5:]):
        sm = _PROSE_SUFFIX.match(low, m.end())
        end = sm.end() if sm else m.end()
        span = _take_content(tail, end)
        if not span.lstrip().startswith(("$", "\\(", "\\[")):
            span = _sentence(tail, end)
        r = read_prose_answer(span)
        if r is not None:
            return Extraction(r, "prose:answer_phrase")
    if short:  # the whole response is the answer: "42", "x = 3", "42 because geometry proves it"
        c = clean(t)
        if parse_value(c) is not None:
            return Extraction(c, "prose:whole")
    c = clean(last_line)
    if parse_number(rhs(c), allow_tail=False) is not None:
        return Extraction(c, "prose:last_line")
    brackets = [m for m in _BRACKET.finditer(tail) if m.start() == 0 or tail[m.start() - 1].isspace()]
    for m in reversed(brackets[-5:]):
        c = clean(m.group(1))
        if isinstance(parse_value(c), (Fraction, str)):
            return Extraction(c, "prose:bracket")
    end = _last_conclusion(low)
    if end >= 0:
        r = read_prose_answer(_sentence(tail, end), first=False)
        if r is not None:
            return Extraction(r, "prose:conclusion")
    spans = list(_DOLLAR_SPAN.finditer(tail))
    if spans:
        inner = spans[-1].group(1)
        c = clean(inner)
        if parse_value(c) is not None:
            return Extraction(c, "prose:math_span")
        nums = prose_numbers(c)
        if len(nums) == 1:
            return Extraction(nums[0], "prose:math_span")
    return Extraction(None, "no_answer")


def extract(text: str, style: str = "dapo") -> Extraction:
    """The final answer of a response and how it was found (see the module docstring)."""
    if style not in STYLES:
        raise ValueError(f"unknown answer style {style!r}; expected one of {STYLES}")
    t, why = answer_region(text)
    if t is None:
        return Extraction(None, why)
    w = t[-WINDOW:]
    lines = answer_lines(w)
    boxes = boxed_answers(w)
    if not lines and not boxes and len(t) > WINDOW:  # rare: an answer followed by a lot of text
        lines = answer_lines(t)
        boxes = boxed_answers(t)
    if len(lines) + len(boxes) > 1:
        merged = sorted(lines + boxes)
        if _hedged(merged):
            return Extraction(None, "hedged")
    picks = []  # (position, answer, how) of the last usable candidate of each kind, preferred kind first
    for cands, how in ((lines, "answer_line"), (boxes, "boxed"))[:: 1 if style == "dapo" else -1]:
        if cands and clean(cands[-1][1]):
            pos, content = cands[-1]
            picks.append((pos, _refine(content) if how == "answer_line" else content, how))
    if not picks:
        return _prose(t)
    first = picks[0]
    if len(picks) == 2 and picks[1][0] > first[0] and parse_value(clean(first[1])) is None:
        # "**Answer:** see below" ... "\boxed{42}": the preferred kind states no value, a later one does
        if parse_value(clean(picks[1][1])) is not None:
            return Extraction(picks[1][1], picks[1][2])
    return Extraction(first[1], first[2])


def extract_answer(text: str, style: str = "dapo") -> str | None:
    """The final answer text of a response, or None (see `extract`)."""
    return extract(text, style).answer


__all__ = ["Extraction", "STYLES", "TOO_BIG", "answer_region", "extract", "extract_answer", "read_prose_answer"]

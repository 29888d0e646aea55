"""Find the final answer in a model response. Pure functions, no I/O.

Order of evidence (style "dapo"): the last `Answer:` line, then the last `\\boxed{}`/`\\fbox{}`; style "boxed"
swaps those two. Only when neither exists do the prose readers run, on the tail of the response: "the answer
is N", a response that *is* a number, a last line that is a number, a `[N]` answer, the last "therefore ...
N" sentence, the last `$...$` span. Qwen3 thinking output counts only after `</think>`; an unclosed
`<think>` is a truncated response. A response that keeps changing its marked answer (more than two
changes) is hedging and has no answer.

Cost is linear in the response: `str.find` scans in C, at most the last 16 candidates of each kind are read,
every brace group and answer is length-capped, and the prose readers only look at the last 3000 characters.
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
PROSE_TAIL = 3000
SHORT_RESPONSE = 300
_MAX_LOOK = 256  # marker-word occurrences inspected per kind (a flood of "answer" words costs nothing more)

_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "</s>", "<|im_start|>")
_LEAD_TOKEN = re.compile(r"\s*(?:<\|im_start\|>(?:assistant\s)?|<s>|<\|begin_of_text\|>)")
_ANSWER_WORDS = ("answer", "réponse", "respuesta", "antwort", "答案")
_COLON = re.compile(r"[ \t*_]{0,6}[:：]")
_OPENERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？।\n]")
_PROSE_MARK = re.compile(
    r"(?i)\b(?:final\s+)?(?:answer|result|réponse|respuesta)\b(?:\s{0,3}(?:is|est|es|would\s+be|will\s+be|=|:|：))?")
_INNER_MARK = re.compile(r"(?i)\b(?:answer|result|réponse)\s{0,3}(?:is|est|es|=|:)\s*")
_CONCLUSION = re.compile(
    r"(?i)\b(?:therefore|thus|hence|so|consequently|donc|alors|daher|also|entonces)\b"
    r"|因此|所以|故|结论|总共|一共|لذا|إذن|इसलिए|अतः")
_BRACKET = re.compile(r"(?:^|(?<=\s))\[([^\[\]\n]{1,80})\](?=[\s.,;:!?]|$)")
_DOLLAR_SPAN = re.compile(r"\$([^$]{1,200})\$")
_PAREN_SPAN = re.compile(r"\\\(([^$]{1,200}?)\\\)")
_WORD = re.compile(r"(?<![\\A-Za-z])[^\W\d_]{2,}")  # a word of letters, not a LaTeX command name
_COMPLETE_END = tuple(".!?。！？।$)]}")
_HEDGE_OR = re.compile(r"(?i)\d\s*(?:,?\s*or|或|oder|ou|o)\s+\S*\d")


@dataclass(frozen=True)
class Extraction:
    """The answer text found (None when there is none) and how it was found, or why not."""

    answer: str | None
    how: str


def answer_region(text: str) -> tuple[str | None, str]:
    """The part of a response that may hold the final answer, or (None, reason)."""
    m = _LEAD_TOKEN.match(text)
    if m and m.end() > 0:
        text = text[m.end():]
    cut = len(text)
    for tok in _END_TOKENS:
        i = text.find(tok, 0, cut)
        if i >= 0:
            cut = i
    text = text[:cut]
    tail = text.rstrip()
    if tail.endswith("|>"):
        # `...\boxed{42}im_end|>`: a chat-template token that lost its `<|`; the generation is corrupt.
        return None, "malformed_special_token"
    j = text.rfind("</think>")
    if j >= 0:
        text = text[j + len("</think>"):]
    if "<think>" in text:
        return None, "unclosed_think"
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
                rest = t[e + len(c):line_end if line_end >= 0 else e + len(c) + MAX_ANSWER_CHARS]
                return t[i:e + len(c)] + rest
            break
    e = t.find("\n", i, i + MAX_ANSWER_CHARS)
    return t[i:e if e >= 0 else i + MAX_ANSWER_CHARS]


def answer_lines(t: str) -> list[tuple[int, str]]:
    """(position, content) of every `Answer:` marker (any case, markdown allowed), last MAX_CANDIDATES."""
    low = t.lower()
    found: list[tuple[int, str]] = []
    for word in _ANSWER_WORDS:
        i = low.rfind(word)
        hits = looked = 0
        while i >= 0 and hits < MAX_CANDIDATES and looked < _MAX_LOOK:
            looked += 1
            m = _COLON.match(low, i + len(word))
            if m:
                found.append((i, _take_content(t, m.end())))
                hits += 1
            i = low.rfind(word, 0, i)
    i = t.rfind("####")  # GSM8K's final-answer marker
    if i >= 0:
        found.append((i, _take_content(t, i + 4)))
    found.sort()
    return found[-MAX_CANDIDATES:]


def boxed_answers(t: str) -> list[tuple[int, str]]:
    """(position, inner text) of the last `\\boxed{..}` / `\\fbox{..}` groups (nested braces allowed)."""
    found: list[tuple[int, str]] = []
    for cmd in ("boxed", "fbox"):
        i = t.rfind(cmd)
        looked = 0
        while i >= 0 and len(found) < 2 * MAX_CANDIDATES and looked < _MAX_LOOK:
            looked += 1
            j = i + len(cmd)
            if j < len(t) and t[j] == "{":
                end = find_group_end(t, j, MAX_ANSWER_CHARS)
                if end > 0:
                    found.append((i, t[j + 1:end]))
            elif j < len(t) and t[j] == " ":  # `\boxed 42`
                m = re.match(r" +([^\s$]{1,40})", t[j:j + 64])
                if m:
                    found.append((i, m.group(1)))
            i = t.rfind(cmd, 0, i)
    found.sort()
    return found[-MAX_CANDIDATES:]


def _sentence(t: str, start: int) -> str:
    m = _SENTENCE_END.search(t, start, start + MAX_ANSWER_CHARS)
    return t[start:m.start() if m else start + MAX_ANSWER_CHARS]


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
    m = None
    for m in _INNER_MARK.finditer(s):
        pass
    if m is not None:
        s = s[m.end():]
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
    if _HEDGE_OR.search(s):
        return None
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


def _prose(t: str) -> Extraction:
    tail = t[-PROSE_TAIL:]
    stripped = tail.strip()
    if not stripped:
        return Extraction(None, "empty")
    # "the answer is 42", "Answer $9$", "réponse est (35 + 70 = 105)"
    marks = list(_PROSE_MARK.finditer(tail))
    for m in reversed(marks[-5:]):
        span = _take_content(tail, m.end())
        if not span.lstrip().startswith(("$", "\\(", "\\[")):
            span = _sentence(tail, m.end())
        r = read_prose_answer(span)
        if r is not None:
            return Extraction(r, "prose:answer_phrase")
    short = len(t.strip()) <= SHORT_RESPONSE
    if short:  # the whole response is the answer: "42", "x = 3", "42 because geometry proves it"
        c = clean(t)
        if parse_value(c) is not None:
            return Extraction(c, "prose:whole")
    last_line = stripped.rsplit("\n", 1)[-1]
    c = clean(last_line)
    if parse_number(rhs(c), allow_tail=False) is not None:
        return Extraction(c, "prose:last_line")
    for m in reversed(list(_BRACKET.finditer(tail))[-5:]):
        c = clean(m.group(1))
        if isinstance(parse_value(c), (Fraction, str)):
            return Extraction(c, "prose:bracket")
    # Below here the evidence is weak: only read a response that ends where a sentence or formula ends
    # (a response cut off mid-sentence by the length limit has no conclusion to read).
    if not (short or stripped.endswith(_COMPLETE_END)):
        return Extraction(None, "no_answer")
    marks = list(_CONCLUSION.finditer(tail))
    if marks:
        m = marks[-1]
        r = read_prose_answer(_sentence(tail, m.end()), first=False)
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
    lines = answer_lines(t)
    boxes = boxed_answers(t)
    if len(lines) + len(boxes) > 1:
        merged = sorted(lines + boxes)
        if _hedged(merged):
            return Extraction(None, "hedged")
    order = [(lines, "answer_line"), (boxes, "boxed")]
    if style == "boxed":
        order.reverse()
    for cands, how in order:
        if cands:
            content = cands[-1][1]
            if clean(content):
                return Extraction(_refine(content) if how == "answer_line" else content, how)
    return _prose(t)


def extract_answer(text: str, style: str = "dapo") -> str | None:
    """The final answer text of a response, or None (see `extract`)."""
    return extract(text, style).answer


__all__ = ["Extraction", "STYLES", "TOO_BIG", "answer_region", "extract", "extract_answer", "read_prose_answer"]

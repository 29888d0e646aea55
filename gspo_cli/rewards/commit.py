"""What one statement about the answer asserts, and in which mode (docs/verifier.md R2, R5). Pure functions.

A statement is a marked answer, an answer sentence, a structured field or a remark (found by
`gspo_cli.rewards.statements`). Its mode is read from the words around its value in its own sentence, before
and after the value (Japanese and Korean put negation, hedges and questions after it), with the vocabulary of
`gspo_cli.rewards.cues`:

- committed: the value stated plainly;
- not the response's (None): a format example, an attribution to someone else, a counterfactual;
- a candidate: hedged, a question, or an alternative ("or 35", "35 instead");
- qualified: a bound, a relation, an estimate or a range (`at least 34`, `\\ge 34`, `about 34`, `33-35`);
- negated: "the answer is not 34", "34 ではありません".

Its values are what it asserts: one value, or several when an aside or an alternative adds another
(`55 (that is, a_8 = 34)`, `34 (thirty-five)`, `30 = 2 \\cdot 3 \\cdot 6`). Everything is bounded by the
length of one sentence.
"""

from __future__ import annotations

import re
from fractions import Fraction

from gspo_cli.rewards import cues
from gspo_cli.rewards.normalize import (
    TOO_BIG,
    chain_values,
    clean,
    format_value,
    parse_value,
)
from gspo_cli.rewards.number_words import chinese_to_int, words_to_int

COMMITTED, CANDIDATE, QUALIFIED, NEGATED = "committed", "candidate", "qualified", "negated"


class Statement:
    """One statement about the answer: where it is, its mode and what it asserts (a slotted class: thousands are
    made per second in training)."""

    __slots__ = ("pos", "mode", "values", "kind", "content", "op", "plain")

    def __init__(self, pos: int, mode: str, values: tuple[str, ...], kind: str, content: str = "",
                 op: str | None = None, plain: bool = False) -> None:
        self.pos = pos  # where it starts in the final output (its marker or sentence)
        self.mode = mode
        self.values = values  # value keys (`34`, `1.5`, `7/16`, or the cleaned text of a symbolic answer)
        self.kind = kind  # "line", "box", "field", "sentence", "conclusion", "prose", "remark"
        self.content = content  # the answer text a grader reads (marked answers and fields)
        self.op = op  # the relation of a qualified statement (cues.GE, ...)
        self.plain = plain  # a plain integer alone on its line: nothing around it to read

    def __repr__(self) -> str:
        return f"Statement({self.pos}, {self.mode}, {self.values}, {self.kind})"


_ABBREVIATIONS = (("e.g.", "eg  "), ("E.g.", "Eg  "), ("i.e.", "ie  "), ("I.e.", "Ie  "), ("z.B.", "zB  "),
                  ("vs.", "vs "), ("etc.", "etc "))


def unabbrev(s: str) -> str:
    """`e.g.`/`i.e.` without their dots (same length, so positions still match s): they end no sentence."""
    if "." in s:
        for a, b in _ABBREVIATIONS:
            if a in s:
                s = s.replace(a, b)
    return s


TERMINATOR = re.compile(r"[.!?;](?=\s|$)|[。！？；\n]")  # what ends a sentence
_LOOK = 240  # characters of a sentence read on either side of a value


def sentence_bounds(t: str, i: int, j: int) -> tuple[int, int]:
    """(start, end) of the sentence holding t[i:j]; the end includes its terminator (`.`, `?`, `吗？`, newline)."""
    lo = max(0, i - _LOOK)
    seg = unabbrev(t[lo:i])
    k = max(seg.rfind("\n"), seg.rfind(". "), seg.rfind("? "), seg.rfind("! "), seg.rfind("; "), seg.rfind(".\t"))
    if not seg.isascii():
        k = max(k, seg.rfind("。"), seg.rfind("！"), seg.rfind("？"), seg.rfind("；"))
    start = lo + k + (1 if seg[k:k + 1] in ("\n", "。", "！", "？", "；") else 2) if k >= 0 else lo
    e = TERMINATOR.search(unabbrev(t[j:j + _LOOK]))
    return start, (j + e.end()) if e else min(len(t), j + _LOOK)


# --- locating the value a statement is about
_DIGIT = re.compile(r"\d")
_DIGITS = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?![\d,])|\d+")
_EN_WORD = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
            "million negative minus").split()
_WORD_RUN = re.compile(r"(?i)(?<![a-z])(?:" + "|".join(_EN_WORD) + r")(?:[\s-]+(?:and[\s-]+)?(?:"
                       + "|".join(_EN_WORD) + r"))*(?![a-z])")
_CJK_RUN = re.compile("[负負〇零一二两兩三四五六七八九十百千万萬亿億]+")
_STANDALONE = re.compile(r"(?i)(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|"
                         r"negative|minus|-)")


def locate(s: str) -> tuple[int, int] | None:
    """(start, end) of the first value in s: a numeral, else number words, else CJK numerals; None if none."""
    m = _DIGIT.search(s)
    w: re.Match[str] | None = None
    if not s[:1].isdigit():
        w = _WORD_RUN.search(s, 0, m.start() if m is not None else len(s))
    while w is not None and (words_to_int(w.group(0)) is None or s[w.end():w.end() + 3] == " of"):
        w = _WORD_RUN.search(s, w.end(), m.start() if m is not None else len(s))  # "one of the cases" is no value
    if w is not None:
        return w.start(), w.end()
    if m is not None:
        d = _DIGITS.match(s, m.start())
        return _signed(s, m.start()), d.end() if d else m.end()
    if not s.isascii():
        c = _CJK_RUN.search(s)
        if c is not None and chinese_to_int(c.group(0)) is not None:
            return c.start(), c.end()
    return None


def _signed(s: str, i: int) -> int:
    """The start of the number whose first digit is s[i], with its sign (`-5`, `- 5`, `−5`) when it has one."""
    k = i - 1
    while k >= 0 and s[k] in " \t" and i - k < 4:
        k -= 1
    if k < 0 or s[k] not in "-−+":
        return i
    j = k - 1
    while j >= 0 and s[j] in " \t$({":
        j -= 1
    if j < 0 or not (s[j].isalnum() or s[j] in ")}]"):  # after punctuation or at the start: a sign
        return k
    if s[j].isdigit() or s[j] in ")}]":  # `3 - 5`, `(x) - 5`: a binary minus
        return i
    glued, spaced_before = k == i - 1, j < k - 1
    word = (j >= 1 and s[j - 1].isalpha()) or not s[j].isascii()  # `is -3`, `答案为-12`
    return k if word or (glued and spaced_before) else i  # `is -3`, `é -5`: a sign; `x - 3`: an operator


# --- the mode of a statement
_CLAUSE_BREAK = re.compile(r"(?i),?\s(?:but|so|therefore|thus|hence|and so|donc|daher|entonces|portanto|"
                           r"quindi|поэтому)\s|[;:]\s|所以|因此|因而|从而")
_NEAR = 6  # tokens before the value in which a negation or hedge qualifies it
_QUESTION = ("?", "？", "吗", "嗎", "까")
_CLAUSE_END = re.compile(r"[,，;；]")


_WORDISH = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}|[^\x00-\x7f]")  # a word (not a LaTeX command) or a non-ASCII letter
_RELATION_CHARS = re.compile(r"[<>~≈≤≥≠±–—]|!=|\\(?:[lg][et]|geq|leq|ne|neq|approx|sim|pm|lt|gt)")


def classify(before: str, after: str) -> tuple[str | None, str | None]:
    """(mode, relation) of a value from its sentence before and after it; mode None: not the response's."""
    if not _WORDISH.search(before) and not _WORDISH.search(after):  # `\boxed{34}`, `Answer: $34$`: no words
        op = cues.relation(before, after) if _RELATION_CHARS.search(before[-24:] + after[:24]) else None
        if op is not None:
            return QUALIFIED, op
        return (CANDIDATE, None) if ("?" in after or "？" in after) else (COMMITTED, None)
    b = unabbrev(before)
    toks = cues.tokens(b)
    if b.isascii() and after.isascii() and "?" not in after and cues.TRIGGERS.isdisjoint(toks) \
            and cues.REL_BEFORE_WORDS.isdisjoint(toks[-4:]) and not _RELATION_CHARS.search(before[-24:] + after[:24]):
        atoks = cues.tokens(after) if _WORDISH.search(after) else []
        if cues.TRIGGERS.isdisjoint(atoks) and cues.REL_AFTER_FIRST.isdisjoint(atoks[:1]) and "'s" not in b:
            return COMMITTED, None  # words, but none that negates, hedges, qualifies or attributes
    whole = cues.classes(b, toks)
    if cues.EXAMPLE in whole or cues.ATTR in whole or _possessive(toks):
        return None, None
    op = cues.relation(before, after, toks)
    if op is not None:
        return QUALIFIED, op
    rest = _CLAUSE_END.split(after, maxsplit=1)[0]
    if not whole and not (rest.strip() and cues.classes(rest)) and not _NEGATED_AFTER.match(after):
        if any(q in after for q in _QUESTION) or "¿" in before:
            return CANDIDATE, None
        return COMMITTED, None
    parts = _CLAUSE_BREAK.split(b)
    clause = parts[-1]
    ctoks = cues.tokens(clause)
    tail = cues.tokens(clause.rsplit(",", 1)[-1]) if "," in clause else ctoks  # `If it does not matter, the answer
    near = cues.classes(" ".join((tail if len(tail) > 1 else ctoks)[-_NEAR:])) if ctoks else set()  # is N`: no negation
    if not clause.isascii():
        near |= cues.classes(clause[-12:]) - {cues.ATTR, cues.EXAMPLE}
    cls = cues.classes(clause, ctoks)
    rest = _CLAUSE_END.split(after, maxsplit=1)[0]
    after_cls = cues.classes(rest) if rest.strip() else set()
    if cues.NEG in near or cues.NEG in after_cls or _NEGATED_AFTER.match(after):
        return NEGATED, None
    if (cues.ALT in cls or cues.ALT in after_cls or cues.ALT_NEAR in cues.classes(" ".join(ctoks[-3:]))
            or (ctoks[:1] and cues.ALT_NEAR in cues.classes(ctoks[0]))):
        return CANDIDATE, None
    if cues.COND in cls or (cues.IF in cls and cues.HEDGE in cls):
        return None, None
    if cues.HEDGE in near or cues.HEDGE in after_cls:
        return CANDIDATE, None
    if any(q in after for q in _QUESTION) or "¿" in before:
        return CANDIDATE, None
    return COMMITTED, None


_NEGATED_AFTER = re.compile(r"(?i)^[\s$*}]*(?:is|was)\s+(?:not|(?:a\s+)?wrong|incorrect)\b")


def _possessive(toks: list[str]) -> bool:
    """`Bob's answer: 34`: a possessive right before the answer word that is not the writer's."""
    for i in range(1, len(toks)):
        if toks[i] in ("answer", "réponse", "antwort", "respuesta") and toks[i - 1].endswith("'s"):
            return True
    return False


def mode_at(t: str, i: int, j: int) -> tuple[str | None, str | None]:
    """The mode of the value t[i:j], read in its sentence."""
    s0, s1 = sentence_bounds(t, i, j)
    return classify(t[s0:i], t[j:s1])


# --- what a statement asserts
# A number standing as a value: `1The` is one, `2x` is not. Written to start with a character set (the sign or digit,
# then the character before it checked by a lookbehind), so `re` skips ahead to candidates instead of trying every
# position; it matches exactly where `(?<![\w.^_{}\\])[+-]?\d[\d,]*(?:\.\d+)?(?![a-z\d_{}^])` does
# (tests/rewards/test_scan_patterns.py).
_NUM = re.compile(r"[+\-\d](?<![\w.^_{}\\].)(?:(?<=[+-])\d|(?<=\d))[\d,]*(?:\.\d+)?(?![a-z\d_{}^])")
_OPERATOR = set("+-*/<>^{}≤≥×÷·")
_OPERATOR_CMDS = ("\\cdot", "\\times", "\\div", "\\le", "\\ge", "\\lt", "\\gt", "\\neq", "\\pm", "\\frac", "\\sqrt")
_ASIDE_START = re.compile(r"(?i)^[\s$.]*(?:\(|（|=|\bor\b|,|，|;|—|–|-\s|\bi\.?e\b|\bthat is\b|\bequivalently\b|\\text\{\s*or)")
_ALTERNATIVE = re.compile(r"(?i)\bif\b|\bunless\b|\botherwise\b|\belse\b|\bor\b|\beither\b")
_WORDS = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
_SENT_END = re.compile(r"[.!?;:](?:\s|$)")


def _operand(s: str, m: re.Match) -> bool:
    """Whether the number m is an operand: next to an operator or a `\\cdot`-like command (spaces skipped)."""
    before = s[max(0, m.start() - 12):m.start()].rstrip()
    after = s[m.end():m.end() + 12].lstrip()
    if (before and before[-1] in _OPERATOR) or (after and after[0] in _OPERATOR):
        return True
    return before.endswith(_OPERATOR_CMDS) or after.startswith(_OPERATOR_CMDS)


def _key(v: Fraction) -> str:
    return format_value(v)


def asserted(s: str, words: bool = False) -> list[str]:
    """Distinct values asserted in a piece of answer text, in order: numbers that are not operands, and (words)
    number words that stand as a value (`(thirty-five)`, `two hundred four`), and Chinese numerals."""
    found: list[tuple[int, str]] = []
    s = s[:4000]
    for m in _NUM.finditer(s):
        if _operand(s, m):
            continue
        tok = m.group(0)
        if tok.isdigit():
            found.append((m.start(), str(int(tok)) if len(tok) < 4000 else tok))
            continue
        v = parse_value(tok.replace(",", "") if not _GROUPED_TOKEN.fullmatch(tok) else tok)
        found.append((m.start(), _key(v) if isinstance(v, Fraction) else tok))
    if words:
        for w in _WORD_RUN.finditer(s):
            n = words_to_int(w.group(0))
            if n is not None and (_STANDALONE.search(w.group(0)) or _alone(s, w)):
                found.append((w.start(), str(n)))
        if not s.isascii():
            for c in _CJK_RUN.finditer(s):
                n = chinese_to_int(c.group(0))
                if n is not None:
                    found.append((c.start(), str(n)))
    out: list[str] = []
    for _, k in sorted(found):
        if k not in out:
            out.append(k)
    return out


def _alone(s: str, w: re.Match) -> bool:
    """A short number word standing alone in its brackets or clause (`(five)`, `, that is, seven.`)."""
    left = s[:w.start()].rstrip(" \t*_$")
    right = s[w.end():].lstrip(" \t*_$")
    return (not left or left[-1] in "(（[,，:：=") and (not right or right[0] in ")）],，.;")


_PLAIN_INT = re.compile(r"[ \t]*\$?([+-]?\d{1,30})\$?\.?[ \t]*")
_ALNUM = re.compile(r"[^\W_]")
_GROUPED_TOKEN = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+")


def values(content: str, aside: str = "") -> list[str]:
    """The distinct values one statement commits to ([] when it states none); `aside` is the rest of its line.

    A sentence states its first value (`Réponse: Janeth paiera 220 $ en 12 mois` is 220) unless an aside or an
    alternative follows it (`55 (that is, a_8 = 34)`, `55, i.e. 34`, `34 if ..., else 30`): then every value.
    An equality chain states the values of its closed-form sides (`30 = 5 \\cdot 3 \\cdot 2` is 30 once). A
    bracketed whole without words is one value (`(1, 2)`). Number words are values (`34 (thirty-five)` is two).
    """
    m = _PLAIN_INT.fullmatch(content)  # most answers: `34`, `$34$`
    if m and (not aside or not _ASIDE_START.match(aside)):  # `\boxed{34}$.`: an aside that adds no value
        return [str(int(m.group(1)))]
    c = clean(content)
    vals: list[str] = []
    if c and _ALNUM.search(c):
        chain = chain_values(c)
        v = parse_value(c) if chain is None else None
        if chain:
            vals = [_key(x) for x in chain]
        elif isinstance(v, Fraction):
            vals = [_key(v)]
            if not c.isascii() or _WORD_RUN.search(c):  # `540（五百零四）`, `480 four hundred`: words are values too
                vals += [k for k in asserted(c, words=True) if k not in vals and not negated_in(c, k)]
        elif v == TOO_BIG or (c[:1] in "([" and c[-1:] in ")]" and not _WORDS.search(c)):
            vals = [c.replace(" ", "")]
        else:
            vals = _sentence_values(c)
    if aside and _ASIDE_START.match(aside):
        for extra in _aside_values(clean(aside) or aside):
            if extra not in vals:
                vals.append(extra)
    return vals


def _sentence_values(c: str) -> list[str]:
    n = words_to_int(c) if c[:1].isalpha() else None
    if n is not None:
        return [str(n)]
    if not c.isascii():
        k = chinese_to_int(c.strip())
        if k is not None:
            return [str(k)]
    loc = locate(c[:4000])
    if loc is not None:  # a sentence: its first value and what the same sentence adds to it
        end = _SENT_END.search(unabbrev(c), loc[1])
        c = c[:end.start()] if end else c
    found = asserted(c, words=True)
    if loc is not None and not c[loc[0]:loc[1]].lstrip("-−+ ")[:1].isdigit():  # a number word stated first
        first = located_key(c[loc[0]:loc[1]])
        if first is not None and first not in found:
            found.insert(0, first)
    if not found:
        return [] if _WORDS.search(c) else [c.replace(" ", "")]
    first_end = loc[1] if loc else 0
    if _ALTERNATIVE.search(c) or _ASIDE_START.match(c[first_end:]):
        return [k for k in found if not negated_in(c, k)]
    return found[:1]


def located_key(token: str) -> str | None:
    """The value key of a located value token (digits, number words or CJK numerals), None if it is none."""
    tok = token.replace(",", "").replace(" ", "").replace("−", "-")
    if tok[:1].isdigit() or tok[:1] in "+-":
        v = parse_value(tok)
        return _key(v) if isinstance(v, Fraction) else None
    n = words_to_int(token)
    if n is None and not token.isascii():
        n = chinese_to_int(token)
    return str(n) if n is not None else None


def _aside_values(aside: str) -> list[str]:
    """Values an aside adds, except those it denies (`34 (not 35)`)."""
    return [k for k in asserted(aside, words=True) if not negated_in(aside, k)]


def negated_in(s: str, key: str) -> bool:
    i = s.find(key)
    return i > 0 and cues.NEG in cues.classes(" ".join(cues.tokens(s[:i])[-2:]))

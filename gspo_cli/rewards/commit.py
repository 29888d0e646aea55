"""Commitments: which values a final output asserts as its answer (the one-value rule, docs/verifier.md).

A commitment is a marked answer (`Answer:` line, `\\boxed{}`), an answer sentence ("the answer is N") or the
conclusion sentence right before the first marked answer ("Thus there are 30 ways."). Mentions that are
negated ("is not 34"), conditional ("if ... would be 30"), exemplary ("e.g. `Answer: 123`") are not
commitments. A commitment with an aside asserting another value (`Answer: 55 (that is, a_8 = 34)`, `34 if
..., else 30`, `\\boxed{55} (or 34)`) commits to two values. Pure functions, bounded regexes.
"""

from __future__ import annotations

import re
from fractions import Fraction

from gspo_cli.rewards.normalize import TOO_BIG, clean, format_value, parse_value

# Cues that make the words before a value a mention, not a commitment.
_CUE_WORDS = frozenset("not never if unless would could might assuming format template eg e.g".split())
_CUE_PHRASES = ("n't", "n’t", "rather than", "instead of", "for example", "for instance", "such as", "in the form",
                "of the form", "suppos")


class _Mention:
    """`_MENTION.search(text)`: a negation, condition or example cue in text (words and phrases, any case).

    Plain word-set and substring tests, not an alternation regex tried at every position (this runs on every
    marked answer)."""

    @staticmethod
    def search(text: str) -> bool:
        low = text.lower()
        if any(p in low for p in _CUE_PHRASES):
            return True
        return not _CUE_WORDS.isdisjoint(w.strip(".,;:!?()[]$*`'\"") for w in low.split())


_MENTION = _Mention()
_AFTER_NEGATED = re.compile(r"(?i)^[\s$}]*(?:is|was)\s+(?:not|(?:a\s+)?wrong|incorrect)\b")
_AFTER_VALUE_NEGATED = re.compile(r"(?i)^[\s$*]*[^\s]{1,40}\s+(?:is|was)\s+(?:not|(?:a\s+)?wrong|incorrect)\b")
_ABBREVIATIONS = (("e.g.", "eg  "), ("E.g.", "Eg  "), ("i.e.", "ie  "), ("I.e.", "Ie  "))


def _unabbrev(s: str) -> str:
    """`e.g.`/`i.e.` without their dots (same length, so positions still match s): they end no sentence."""
    if "." in s:
        for a, b in _ABBREVIATIONS:
            s = s.replace(a, b)
    return s


_SENT_END = re.compile(r"[.!?;:](?:\s|$)")
# A number asserted as a value: not an operand (next to an operator or brace), not a subscript or power.
_NUM = re.compile(r"(?<![\w.^_{}\\])[+-]?\d[\d,]*(?:\.\d+)?(?![a-z\d_{}^])")  # `1The`: a value, `2x` not
_OPERATOR = set("+-*/<>^{}≤≥×÷·")
_OPERATOR_CMDS = ("\\cdot", "\\times", "\\div", "\\le", "\\ge", "\\lt", "\\gt", "\\neq", "\\pm", "\\frac", "\\sqrt")
_ASIDE_START = re.compile(r"(?i)^[\s$.]*(?:\(|=|\bor\b|,|;|\bi\.?e\b|\bthat is\b|\bequivalently\b|\\text\{\s*or)")
_ALTERNATIVE = re.compile(r"(?i)\bif\b|\bunless\b|\botherwise\b|\belse\b|\bor\b|\beither\b")
_ANSWER_SUFFIX = re.compile(r"\s+(?:is|IS|should\s+be|must\s+be|=)(?![A-Za-z])\s*")
_CONCLUSION = re.compile(r"(?i)^\W*(?:therefore|thus|hence|so|in total|in conclusion|altogether|finally)\b")
_WORDS = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
MAX_SENTENCES = 16
_LOOK = 240  # characters of context read around a marker


def _prefix(t: str, pos: int) -> str:
    """The words of the sentence before `pos` (same line, `e.g.`/`i.e.` not ending a sentence)."""
    line_start = t.rfind("\n", max(0, pos - _LOOK), pos) + 1
    if pos - line_start < 4:  # the marker starts its line (`Answer: 34`, `**Answer:**`): nothing before it
        return ""
    seg = _unabbrev(t[max(line_start, pos - _LOOK):pos])
    ends = list(_SENT_END.finditer(seg))
    return seg[ends[-1].end():] if ends else seg


def is_mention(t: str, pos: int, after: int | None = None) -> bool:
    """Whether the marker at `pos` is negated, conditional or exemplary (ends at `after`: what follows it)."""
    if _MENTION.search(_prefix(t, pos)):
        return True
    return after is not None and bool(_AFTER_NEGATED.match(t[after:after + 40]))


def mention_phrase(t: str, pos: int, span: str) -> bool:
    """Whether an answer phrase at `pos` whose value follows in `span` is a mention ("the answer is not 34")."""
    first = _NUM.search(span)
    return is_mention(t, pos) or bool(_MENTION.search(span[:first.start()] if first else span))


def _operand(s: str, m: re.Match) -> bool:
    before = s[:m.start()].rstrip()
    after = s[m.end():].lstrip()
    if (before and before[-1] in _OPERATOR) or (after and after[0] in _OPERATOR):
        return True
    return before.endswith(_OPERATOR_CMDS) or after.startswith(_OPERATOR_CMDS)


def asserted(s: str) -> list[str]:
    """Distinct values asserted in a piece of answer text: numbers that are not operands, in order."""
    out: list[str] = []
    for m in _NUM.finditer(s[:4000]):
        if _operand(s, m):
            continue
        v = parse_value(m.group(0).replace(",", "") if not re.fullmatch(r"\d{1,3}(?:,\d{3})+", m.group(0))
                        else m.group(0))
        key = format_value(v) if isinstance(v, Fraction) else m.group(0)
        if key not in out:
            out.append(key)
    return out


_PLAIN_INT = re.compile(r"[ \t]*\$?([+-]?\d{1,30})\$?\.?[ \t]*")


def values(content: str, aside: str = "") -> list[str]:
    """The distinct values one marked answer commits to ([] when it states none); `aside` is the rest of its line.

    A sentence states its first value (`Réponse: Janeth paiera 220 $ en 12 mois` is 220) unless an aside or an
    alternative follows it (`55 (that is, a_8 = 34)`, `55, i.e. 34`, `34 if ..., else 30`): then every value.
    A bracketed whole without words is one value (`(1, 2)`)."""
    m = _PLAIN_INT.fullmatch(content)  # most answers: `34`, `$34$`
    if m and not aside:
        return [str(int(m.group(1)))]
    c = clean(content)
    vals: list[str] = []
    if c and any(ch.isalnum() for ch in c):
        v = parse_value(c)
        if isinstance(v, Fraction):
            vals = [format_value(v)]
        elif v == TOO_BIG or (c[:1] in "([" and c[-1:] in ")]" and not _WORDS.search(c)):
            vals = [c.replace(" ", "")]
        else:
            first = _NUM.search(c[:4000])
            if first is not None:  # a sentence: its first value and what the same sentence adds to it
                end = _SENT_END.search(_unabbrev(c), first.end())
                c = c[:end.start()] if end else c
            nums = [first] if first is not None else []
            found = asserted(c)
            if not found:
                vals = [] if _WORDS.search(c) else [c.replace(" ", "")]
            elif _ALTERNATIVE.search(c) or (nums and _ASIDE_START.match(c[nums[0].end():])):
                vals = found
            else:
                vals = found[:1]
    if aside and _ASIDE_START.match(aside):
        for extra in asserted(clean(aside) or aside):
            if extra not in vals:
                vals.append(extra)
    return vals


def negated_after(content: str) -> bool:
    """`Answer: 41 was a wrong guess`: the marked value is denied right after it."""
    return bool(_AFTER_VALUE_NEGATED.match(content))


def _answer_sentence_starts(t: str):
    """(start, value start) of "answer is" phrases, last first; found with str.rfind (C speed), not a regex scan."""
    i, looked = len(t), 0
    while looked < 4 * MAX_SENTENCES:
        i = t.rfind("nswer", 0, i)
        if i < 1:
            return
        looked += 1
        if t[i - 1] in "aA" and not (i >= 2 and t[i - 2].isalnum()):
            m = _ANSWER_SUFFIX.match(t, i + 5)
            if m:
                yield i - 1, m.end()


def answer_sentences(t: str) -> list[list[str]]:
    """The values of every "the answer is N" sentence in t that is a commitment (not negated/conditional/...)."""
    out: list[list[str]] = []
    for start, at in _answer_sentence_starts(t):
        if len(out) >= MAX_SENTENCES:
            break
        if is_mention(t, start):
            continue
        end = _SENT_END.search(_unabbrev(t[at:at + 300]))
        span = t[at:at + (end.start() if end else 300)]
        span = re.split(r"\\boxed|\\fbox", span, maxsplit=1)[0]  # a box is a commitment of its own
        first = _NUM.search(span)
        if first is None or _MENTION.search(span[:first.start()]):
            continue
        vals = asserted(clean(span) or span)
        out.append(vals if _ALTERNATIVE.search(span) else vals[:1])
    return out[::-1]


def conclusion_before(t: str, pos: int) -> list[str]:
    """The value of a conclusion sentence ("Thus there are 30 ways.") ending right before the marker at pos."""
    head = t[max(0, pos - _LOOK):pos].rstrip(" \t\r\n*#$\\[")
    if head[-14:].lower().rstrip(":").endswith("final answer"):  # a "**Final Answer**" heading
        head = head[:head.lower().rfind("final answer")].rstrip(" \t\r\n*")
    if not head.endswith((".", "!", "?", ":")):  # the marker sits inside this sentence: it is the conclusion
        return []
    body = head[:-1]
    start = max(body.rfind(". "), body.rfind("! "), body.rfind("? "), body.rfind("\n"), body.rfind(": ")) + 1
    sentence = body[start:]
    if not _CONCLUSION.match(sentence) or _MENTION.search(sentence):
        return []
    vals = asserted(sentence)  # raw text: `$34$` reads as 34, `12{,}000` states no value here
    # A sentence naming several numbers ("Hence there are 34 ways, where 3 are symmetric.") states no single
    # value: it is not a commitment, and the marked answer decides. A hedge gains nothing from this: only the
    # marked answer is paid, and "the answer is A or B" sentences are judged on their own (answer_sentences).
    return vals if len(vals) == 1 else []

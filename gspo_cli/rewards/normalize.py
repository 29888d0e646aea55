"""Answer normalisation and exact numeric parsing. Pure functions, no I/O.

`clean` turns an extracted answer into plain text (delimiters, boxes, \\text{}, markdown, separators gone);
`parse_value` reads that text as an exact number (`Fraction`), evaluating small integer-valued LaTeX
expressions (`\\frac`, `\\sqrt`, `^`, `\\times`) with a bounded recursive-descent parser (never `eval`).
Every regex here is linear: no nested quantifiers, no backtracking over unbounded alternations.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from gspo_cli.rewards.exact import TOO_BIG, evaluate

MAX_ANSWER_CHARS = 2000  # longer "answers" are not answers; bounds all work below

# TOO_BIG: a value that exists but is absurdly large (a power tower): never equal to any ground truth we store.

# --- tokens and delimiters -------------------------------------------------------------------------

_SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z0-9_]{1,40}\|>|</?s>")
_MD = re.compile(r"\*\*|__|`")
_TEXT_CMDS = (
    "\\text",
    "\\textbf",
    "\\textit",
    "\\textrm",
    "\\mathrm",
    "\\mathbf",
    "\\mathit",
    "\\mbox",
    "\\boldsymbol",
    "\\bm",
    "\\operatorname",
    "\\textnormal",
    "\\hbox",
)
_BOX_CMDS = ("\\boxed", "\\fbox", "\\framebox")
# LaTeX spacing / sizing noise that never changes a value.
_NOISE = re.compile(
    r"\\(?:left|right|big|Big|bigg|Bigg|displaystyle|textstyle|limits|quad|qquad)(?![A-Za-z])|\\[,;:> ]|\\!|~"
)
# Thousands separators written between digits: `{,}`, `,\!`, `\!,\!`, `\,`, `\;`, `\:`, `\ `, thin/no-break
# spaces, in any mix: LaTeX spacing around an optional comma (or a braced comma) becomes one comma.
_SP = r"(?:\\[!,;: ]|[\u2009\u202f\u00a0\u2007\u2008])"
_SEP_LATEX = re.compile(
    r"(?<=\d)(?:" + _SP + r"*(?:\s?\{\s?,\s?\}\s?|,)(?:" + _SP + r"+\s?)?|" + _SP + r"+)(?=\d)"
)  # a plain `, ` stays: `40, 320` is a pair
_DEGREE = re.compile(r"\^\s?\{?\s?\\circ\s?\}?|\\circ|°|\\degree")
_PERCENT = re.compile(r"\\?%")
_UNIT_POWER = re.compile(  # `12 cm^2`, `5 m^{3}`, `12 \text{ m}^2`: the unit's power, not part of the number
    r"(\d\s{0,3}(?:cm|mm|km|m|ft|in|yd|mi|meters?|feet|inches|units?|miles?))\s{0,3}\^\s{0,3}\{?\s{0,3}[23]\s{0,3}\}?"
)
_CURRENCY = re.compile(r"\\\$|[$€£¥₹]|\\euro|\\pounds")
_TRAIL_PUNCT = " \t\r\n.。,，;；:：!！?？\\"
_WS = re.compile(r"\s+")
_INVISIBLE = re.compile(r"[\u200b-\u200f\u2060\ufeff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Terminal colour codes and UTF-8 read as Latin-1 (no-break space, zero-width space, BOM) around an answer.
_ANSI = re.compile(r"\x1b\[[0-9;?]{0,20}[A-Za-z]|\x1b[@-_]")
_MOJIBAKE = re.compile("\u00e2\u20ac[\u2039\u00af\u2030]|\u00ef\u00bb\u00bf|\u00c2(?=[\u00a0 ]|$)|\ufffd")
_EMPTY_GROUP = re.compile(r"\{\s*\}")

# A number with optional consistent thousands grouping (`,` or a space), optional decimal part.
_NUM = r"[+\-−]?(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+|\d+)(?:\.\d+)?|[+\-−]?\.\d+"
_NUM_FULL = re.compile(r"(" + _NUM + r")")
# Tail allowed after a number in an answer: words/units without digits or math operators.
# (`km/h`: a slash between letters is a unit rate, not a division)
_STRICT = re.compile(
    r"\s*(" + _NUM + r")((?:\s|[^\x00-\x7f]|%)(?:[^0-9+*/^=<>(){}\[\]\\|_]|(?<=[A-Za-z])/(?=[A-Za-z])){0,80})?\s*"
)
_EXACT = re.compile(r"\s*(" + _NUM + r")\s*")
# Numbers inside prose: not glued to Latin letters/digits (`AZYUK2A` holds no number).
_PROSE_NUM = re.compile(r"(?<![A-Za-z0-9_.^])(" + _NUM.replace(r"\d{1,3}(?: \d{3})+|", "") + r")(?![A-Za-z0-9_])")


def find_group_end(s: str, open_idx: int, limit: int = MAX_ANSWER_CHARS * 4) -> int:
    """Index of the `}` matching the `{` at open_idx, or -1. Linear, bounded by `limit` characters."""
    depth = 0
    end = min(len(s), open_idx + limit)
    i = open_idx
    o = c = -2  # next "{" / "}" at or after i (-1: none left); found with str.find, which runs in C
    while i < end:
        if o != -1 and o < i:
            o = s.find("{", i, end)
        if c < i:
            c = s.find("}", i, end)
            if c < 0:
                return -1
        if 0 <= o < c:
            depth += 1
            i = o + 1
        else:
            depth -= 1
            if depth == 0:
                return c
            i = c + 1
    return -1


def _unwrap_commands(s: str, cmds: tuple[str, ...], keep_inner: bool = True) -> str:
    """Replace `\\cmd{inner}` by inner (or nothing). Iterative, each brace group visited once."""
    for _ in range(16):  # nesting depth we bother with; deeper is not an answer
        hit = False
        for cmd in cmds:
            start = 0
            while True:
                i = s.find(cmd, start)
                if i < 0:
                    break
                j = i + len(cmd)
                if j < len(s) and s[j].isalpha():  # \textbfx is another command
                    start = j
                    continue
                k = j
                while k < len(s) and s[k] == " ":
                    k += 1
                if k < len(s) and s[k] == "{":
                    end = find_group_end(s, k)
                    if end < 0:
                        if cmd in _BOX_CMDS:  # an unclosed box is a cut-off answer: leave it unreadable
                            start = j
                            continue
                        s = s[:i] + s[k + 1 :]
                    else:
                        inner = s[k + 1 : end] if keep_inner else ""
                        s = s[:i] + inner + s[end + 1 :]
                    hit = True
                    start = i
                elif cmd in _BOX_CMDS and k > j:  # `\boxed 42`
                    s = s[:i] + s[k:]
                    hit = True
                    start = i
                else:
                    start = j
        if not hit:
            break
    return s


_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))


def strip_delimiters(s: str) -> str:
    """Remove math delimiters and the markdown/bracket wrapping commonly put around one answer."""
    s = s.strip()
    for _ in range(8):
        before = s
        s = s.strip().rstrip(".。,，;；:：!！?？").strip()
        for o, c in _DELIMS:
            if s.startswith(o) and s.endswith(c) and len(s) >= len(o) + len(c):
                s = s[len(o) : len(s) - len(c)].strip()
        s = s.replace("\\(", " ").replace("\\)", " ").replace("\\[", " ").replace("\\]", " ")
        s = s.replace("$", " ").strip()
        if len(s) >= 2 and s[0] == "*" and s[-1] == "*":
            s = s.strip("*").strip()
        if s == before:
            break
    return s


def _drop_stray_closers(s: str) -> str:
    """`42}` -> `42`: closing braces at the end that close nothing (a box closed once too often)."""
    s = s.rstrip()
    extra = s.count("}") - s.count("{")
    while extra > 0 and s.endswith("}"):
        s = s[:-1].rstrip()
        extra -= 1
    return s


# Qualifiers after the one value that do not change it: `34 \pmod{1000}`, `34 (mod 1000)`, `34 (cm)`.
_MOD_QUALIFIER = re.compile(
    r"\s*(?:\\pmod\s*\{?\s*\d{1,12}\s*\}?|\(\s*\\?(?:bmod|mod)\s*\{?\s*\d{1,12}\s*\}?\s*\)"
    r"|\\(?:bmod|mod)\s*\{?\s*\d{1,12}\s*\}?|\bmod(?:ulo)?\s+\d{1,12})\s*$"
)
_PAREN_UNIT = re.compile(r"(?<=[\d}])\s*\(\s*(?:[A-Za-z]+\.?\s*(?:\^\s*\{?\d\}?)?\s*){1,3}\)\s*$")
_ONE_BRACKETED = re.compile(r"[\[(]\s*([+-]?\d+(?:\.\d+)?)\s*[\])]")  # `[34]`, `(34)`; `(40,320)` is a pair
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_NUMBER = re.compile(r"(?i)[a-z]+(?:[\s-]+(?:and[\s-]+)?[a-z]+){0,8}")


def words_to_int(s: str) -> int | None:
    """`thirty-four` -> 34, `two hundred four` -> 204, `one thousand` -> 1000; None unless s is only number words."""
    s = s.strip().rstrip(".")
    if not s or len(s) > 80 or not _WORD_NUMBER.fullmatch(s):
        return None
    total = current = 0
    seen = False
    for w in re.split(r"[\s-]+", s.lower()):
        if w == "and" and seen:
            continue
        if w in _UNITS:
            current += _UNITS.index(w)
        elif w in _TENS:
            current += 10 * (_TENS.index(w) + 2)
        elif w == "hundred" and seen:
            current *= 100
        elif w in ("thousand", "million") and seen:
            total += current * (1000 if w == "thousand" else 1_000_000)
            current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


def strip_qualifiers(s: str) -> str:
    """The one value without what does not change it: a modulus, a unit in parentheses, brackets, number words."""
    if "mod" in s:
        s = _MOD_QUALIFIER.sub("", s)
    if s.endswith(")"):
        s = _PAREN_UNIT.sub("", s)
    m = _ONE_BRACKETED.fullmatch(s)
    if m:
        return m.group(1)
    if s[:1].isalpha():
        n = words_to_int(s)
        if n is not None:
            return str(n)
    return s


_SIMPLE = re.compile(r"[ \t\n]*\$?([+-]?\d{1,100})\$?\.?[ \t\n]*")  # `42`, `$42$.`: most answers


@lru_cache(maxsize=8192)  # ground truths repeat (a group of 16 responses shares one); pure, so cacheable
def clean(answer: str) -> str:
    """Plain text of one extracted answer: no delimiters, boxes, text commands, markdown or separators."""
    m = _SIMPLE.fullmatch(answer)
    if m:
        return m.group(1)
    if len(answer) > MAX_ANSWER_CHARS:  # not an answer; never truncate (two long numbers could then match)
        return ""
    s = _ANSI.sub("", answer) if "\x1b" in answer else answer
    s = _MOJIBAKE.sub(" ", s)
    s = _INVISIBLE.sub("", s)
    s = _SPECIAL_TOKEN.sub(" ", s)
    s = _MD.sub("", s)
    s = _unwrap_commands(s, _BOX_CMDS)
    s = _unwrap_commands(s, _TEXT_CMDS)
    s = _drop_stray_closers(_EMPTY_GROUP.sub(" ", s))
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = _SEP_LATEX.sub(",", s)
    s = _NOISE.sub(" ", s)
    s = _DEGREE.sub(" ", s)
    s = _PERCENT.sub(" ", s)
    s = _UNIT_POWER.sub(r"\1", s)
    s = _CURRENCY.sub(" ", s)
    s = strip_delimiters(s)
    s = s.replace("−", "-")
    s = _WS.sub(" ", s).strip()
    s = s.rstrip(_TRAIL_PUNCT).strip()
    return strip_qualifiers(s).strip()


def _num_to_fraction(tok: str) -> Fraction:
    tok = tok.replace(",", "").replace(" ", "").replace("−", "-")
    return Fraction(tok)


def rhs(s: str) -> str:
    """Right-hand side of the last `=`/`\\approx` (`x = 42` -> `42`); the text itself when there is none."""
    cut = max(s.rfind("="), s.rfind("\\approx"), s.rfind("≈"))
    if cut < 0:
        return s
    if s.startswith("\\approx", cut):
        cut += len("\\approx") - 1
    out = s[cut + 1 :].strip()
    return out if out else s


def parse_number(s: str, allow_tail: bool = True) -> Fraction | None:
    """A single number, optionally followed by unit words (`42 square`, `90 degrees`), else None."""
    m = (_STRICT if allow_tail else _EXACT).fullmatch(s)
    if not m:
        return None
    try:
        return _num_to_fraction(m.group(1))
    except ValueError:  # beyond int's digit limit
        return None


def prose_numbers(s: str) -> list[str]:
    """Numbers standing alone in prose, in order (thousands-grouped tokens kept whole)."""
    return [m.group(1) for m in _PROSE_NUM.finditer(s[: MAX_ANSWER_CHARS * 2])]


@lru_cache(maxsize=8192)
def parse_value(answer: str) -> Fraction | str | None:
    """Exact value of a cleaned answer: a Fraction, TOO_BIG, or None when it is not a closed-form number."""
    if not answer:
        return None
    s = rhs(answer)
    v = parse_number(s)
    if v is not None:
        return v
    return evaluate(s)


def format_value(v: Fraction) -> str:
    """`33`, `1.5` (terminating decimals), else `p/q`."""
    if v.denominator == 1:
        return str(v.numerator)
    d, twos, fives = v.denominator, 0, 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d == 1 and max(twos, fives) <= 12:
        places = max(twos, fives)
        scaled = v * 10**places  # exact integer
        sign = "-" if scaled < 0 else ""
        digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
        return f"{sign}{digits[:-places]}.{digits[-places:]}"
    return f"{v.numerator}/{v.denominator}"


def normalize(answer: str) -> str:
    """Canonical string of an answer: `033`, `33.0`, `\\boxed{33}`, `$33$.` all give `33`."""
    s = clean(answer)
    v = parse_value(s)
    if isinstance(v, Fraction):
        return format_value(v)
    return s.replace(" ", "")


__all__ = ["TOO_BIG", "clean", "evaluate", "find_group_end", "normalize", "parse_number", "parse_value", "prose_numbers", "rhs"]

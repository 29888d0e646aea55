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
from gspo_cli.rewards.latex import BOX_CMDS, MAX_ANSWER_CHARS, blank_strikes, unwrap_colors, unwrap_commands
from gspo_cli.rewards.number_words import chinese_to_int, words_to_int

# TOO_BIG: a value that exists but is absurdly large (a power tower): never equal to any ground truth we store.

# --- tokens and delimiters -------------------------------------------------------------------------

_SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z0-9_]{1,40}\|>|</?s>")
_MD = re.compile(r"\*\*|__|`")
_TEXT_CMDS = tuple("\\" + c for c in (  # wrappers that change only the look (R5a): their argument is the value
    "text textbf textit textrm mathrm mathbf mathit mbox boldsymbol bm operatorname textnormal hbox emph underline uline "
    "ul hl textsf texttt textup textsl textsc mathsf mathtt mathnormal makebox num").split())
# Other looks read through (R5a, R5c, R5g), one pass: an equation tag, a footnote, an end-of-proof mark, a comment, a
# unit without a number, an answer label or a choice letter before the value; kept: the number of a unit macro
# (`\SI{12}{cm}`), the text of a markdown link, a digit before its base subscript (`101_2`), a sign in braces (`{-}5`).
# The sign in words before a numeral (`minus 5`) becomes the sign.
_LOOKS = re.compile(
    r"\\tag\*?\{[^{}]{0,20}\}|\\footnote\{[^{}]{0,200}\}|\[\^[^\]\s]{1,10}\]|∎|□|\\(?:blacksquare|square|qed|Box)\b"
    r"|\bQ\.E\.D\.?|<!--.*?-->|\\si\{(?:[^{}]|\{[^{}]*\})*\}|(?i:^\s*(?:final\s+)?answer\s*[:：])|^\s*\(?[A-E]\)\s+(?=\S)"
    r"|\\(?:SI|qty)\{([^{}]*)\}\{(?:[^{}]|\{[^{}]*\})*\}|\[([^\[\]]{1,40})\]\([^()\s]{0,200}\)|(\d)_\{?\d{1,2}\}?(?![\d}])"
    r"|\{([+\-−])\}|((?i:negative|minus)\s+)(?=\d)")


def _look(m: re.Match) -> str:
    return " " if m.lastindex is None else "-" if m.lastindex == 5 else m.group(m.lastindex)


_SWITCHES = re.compile(  # size, font and colour switches that change only the look: `{\Large 34}`, `{\color{red} 34}`
    r"\\(?:tiny|scriptsize|footnotesize|small|normalsize|large|Large|LARGE|huge|Huge|bf|it|rm|sf|tt|bfseries|"
    r"itshape|mdseries|boldmath|em)(?![A-Za-z])|\\color\s*\{[^{}]{0,30}\}|\\color\s*\[[^\]]{0,20}\]\s*\{[^{}]{0,30}\}"
)
_HTML = re.compile(r"</?(?:b|strong|i|em|u|mark|span|code|big|font|sup|ins)(?:\s[^<>]{0,60})?>", re.IGNORECASE)
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
        if len(s) >= 2 and s[0] == "_" and s[-1] == "_":
            s = s.strip("_").strip()
        if s[-1:] in ("*", "_") and s[:1] not in ("*", "_"):  # `294***`: a bold closer whose opener was skipped
            s = s.rstrip("*_").strip()
        if len(s) >= 4 and s.startswith("==") and s.endswith("=="):
            s = s[2:-2].strip()
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
def chain_values(s: str) -> list[Fraction] | None:
    """The distinct values of the closed-form sides of an equality chain (`30 = 5 \\cdot 3 \\cdot 2` -> [30],
    `m + n = 113` -> [113], `30 = 36` -> [30, 36]); None when s has no top-level `=` or no closed-form side."""
    sides = split_equalities(s)
    if len(sides) < 2:
        return None
    out: list[Fraction] = []
    for side in sides:
        v = parse_value(side.strip())
        if isinstance(v, Fraction) and v not in out:
            out.append(v)
    return out or None


def split_equalities(s: str) -> list[str]:
    """s split at its `=` signs outside brackets (not `<=`, `>=`, `!=`, `==`, `:=`)."""
    if "=" not in s:
        return [s]
    parts, depth, last = [], 0, 0
    for i, ch in enumerate(s):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "=" and depth == 0 and s[i - 1:i] not in ("<", ">", "!", "=", ":") and s[i + 1:i + 2] != "=":
            parts.append(s[last:i])
            last = i + 1
    parts.append(s[last:])
    return parts


def strip_qualifiers(s: str) -> str:
    """The one value without what does not change it: a modulus, a unit in parentheses, brackets, number words."""
    if "mod" in s:
        s = _MOD_QUALIFIER.sub("", s)
    if s[:1] in "eEpP" and s[:8].lower() in ("exactly ", "precisel"):  # `exactly 34` states the value
        s = s.split(None, 1)[1] if " " in s else s
    if s.endswith(")"):
        m = _PAREN_UNIT.search(s)
        if m is not None and words_to_int(m.group(0).strip(" ()")) is None:  # `34 (cm)`, not `34 (thirty-five)`
            s = s[:m.start()]
    m = _ONE_BRACKETED.fullmatch(s)
    if m:
        return m.group(1)
    if s[:1].isalpha():
        n = words_to_int(s)
        if n is None and not s.isascii():
            n = chinese_to_int(s)
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
    s = blank_strikes(s)
    s = _MOJIBAKE.sub(" ", s)
    s = _INVISIBLE.sub("", s)
    s = _SPECIAL_TOKEN.sub(" ", s)
    if "<" in s:
        s = _HTML.sub(" ", s)
    s = _MD.sub("", s)
    if "\\" in s:
        s = unwrap_colors(s)
        s = _SWITCHES.sub(" ", s)
        if "\\framebox[" in s or "\\makebox[" in s:
            s = re.sub(r"\\(framebox|makebox)\s*(?:\[[^\]]{0,40}\]\s*){1,2}", r"\\\1", s)
    s = unwrap_commands(s, BOX_CMDS)
    s = unwrap_commands(s, _TEXT_CMDS)
    s = _LOOKS.sub(_look, s)
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
    if s[:1] in "-+" and s[1:2] == " ":  # `- 5`: a minus sign spaced from its number (R5c)
        s = s[0] + s[1:].lstrip()
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


__all__ = ["TOO_BIG", "chain_values", "clean", "evaluate", "normalize", "parse_number", "parse_value", "prose_numbers", "rhs"]

"""A tiny exact evaluator for integer-valued LaTeX (`\\frac`, `\\sqrt`, `^`, `\\times`). Pure, never `eval`.

A bounded recursive-descent parser over at most 200 tokens; powers are capped (a power tower is TOO_BIG, not
a minute of big-integer arithmetic).
"""

from __future__ import annotations

import re
from fractions import Fraction

TOO_BIG = "too_big"

_TOKEN = re.compile(
    r"\s*(\d+(?:\.\d+)?|\.\d+|\\frac|\\sqrt|\\times|\\cdot|\\div|\\pi|\\[A-Za-z]+|[A-Za-z]|[-+*/^(){}\[\]]|\S)"
)
_MAX_TOKENS = 200
_MAX_EXP = 4096
_MAX_BITS = 1 << 16


class _Fail(Exception):
    pass


class _TooBig(Exception):
    pass


class _Parser:
    """expr := term (('+'|'-') term)* ; term := unary (('*'|'/'|implicit) unary)* ; unary := ('-'|'+') unary | power ;
    power := atom ('^' unary)? ; atom := number | '(' expr ')' | '{' expr '}' | \\frac g g | \\sqrt g"""

    def __init__(self, toks: list[str]):
        self.t = toks
        self.i = 0
        self.depth = 0

    def peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self) -> str:
        if self.i >= len(self.t):
            raise _Fail
        tok = self.t[self.i]
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        if self.take() != tok:
            raise _Fail

    def expr(self) -> Fraction:
        self.depth += 1
        if self.depth > 60:
            raise _Fail
        v = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            w = self.term()
            v = v + w if op == "+" else v - w
        self.depth -= 1
        return v

    def term(self) -> Fraction:
        v = self.unary()
        while True:
            p = self.peek()
            if p in ("*", "\\times", "\\cdot"):
                self.take()
                v = v * self.unary()
            elif p in ("/", "\\div"):
                self.take()
                w = self.unary()
                if w == 0:
                    raise _Fail
                v = v / w
            elif p in ("(", "\\frac", "\\sqrt"):  # implicit product: 2(3), 4\sqrt{2}
                v = v * self.unary()
            else:
                return v

    def unary(self) -> Fraction:
        p = self.peek()
        if p == "-":
            self.take()
            return -self.unary()
        if p == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> Fraction:
        base = self.atom()
        if self.peek() == "^":
            self.take()
            exp = self.unary() if self.peek() not in ("{",) else self.atom()
            return _pow(base, exp)
        return base

    def group(self) -> Fraction:
        """A `{...}` argument, or a single digit/token as in `\\frac34`."""
        if self.peek() == "{":
            return self.atom()
        tok = self.take()
        if tok.isdigit():
            return Fraction(int(tok[0])) if len(tok) == 1 else self._split_digit(tok)
        raise _Fail

    def _split_digit(self, tok: str) -> Fraction:
        # `\frac34` tokenises as "34": the command takes one digit, the rest stays for the next argument.
        self.t.insert(self.i, tok[1:])
        return Fraction(int(tok[0]))

    def atom(self) -> Fraction:
        tok = self.take()
        if tok[0].isdigit() or tok[0] == ".":
            return Fraction(tok)
        if tok in ("(", "{"):
            v = self.expr()
            self.expect(")" if tok == "(" else "}")
            return v
        if tok == "\\frac":
            num = self.group()
            den = self.group()
            if den == 0:
                raise _Fail
            return num / den
        if tok == "\\sqrt":
            if self.peek() == "[":
                raise _Fail  # n-th roots: leave to math-verify
            return _sqrt(self.group())
        raise _Fail


def _pow(base: Fraction, exp: Fraction) -> Fraction:
    if exp.denominator != 1:
        if exp == Fraction(1, 2):
            return _sqrt(base)
        raise _Fail
    e = exp.numerator
    if base == 1:
        return base
    if base == 0:
        if e <= 0:
            raise _Fail
        return base
    if base == -1:
        return Fraction(1 if e % 2 == 0 else -1)
    if abs(e) > _MAX_EXP or abs(e) * max(base.numerator.bit_length(), base.denominator.bit_length()) > _MAX_BITS:
        raise _TooBig
    return base**e


def _sqrt(v: Fraction) -> Fraction:
    from math import isqrt

    if v < 0:
        raise _Fail
    n, d = isqrt(v.numerator), isqrt(v.denominator)
    if n * n != v.numerator or d * d != v.denominator:
        raise _Fail  # irrational: not something the exact path decides
    return Fraction(n, d)


def evaluate(s: str) -> Fraction | str | None:
    """Exact value of a small arithmetic LaTeX expression, TOO_BIG, or None (not closed-form / not arithmetic)."""
    if len(s) > 400 or not s:
        return None
    # `1,500 \times 2` is fifteen hundred; `(40,320)` is a pair, not forty thousand
    s = s.replace(",", "") if _looks_grouped(s) and not any(b in s for b in "()[]") else s
    toks = _TOKEN.findall(s)
    if not toks or len(toks) > _MAX_TOKENS:
        return None
    p = _Parser(toks)
    try:
        v = p.expr()
        if p.i != len(p.t):
            return None
        return v
    except _TooBig:
        return TOO_BIG
    except (_Fail, ValueError, ZeroDivisionError, OverflowError):
        return None


_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")


def _looks_grouped(s: str) -> bool:
    """True when every comma in s sits inside a well-formed thousands group (`1,500 \\times 2`)."""
    if "," not in s:
        return False
    return s.count(",") == sum(m.group(0).count(",") for m in _GROUPED.finditer(s)) and not re.search(r"\d,\d{3}\d", s)

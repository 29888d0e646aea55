"""Numbers written as words: English number words (`thirty-four`) and Chinese / Japanese numerals (`三十四`).
Pure functions.
"""

from __future__ import annotations

import re

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_NUMBER = re.compile(r"(?i)[a-z]+(?:[\s-]+(?:and[\s-]+)?[a-z]+){0,8}")


def words_to_int(s: str) -> int | None:
    """`thirty-four` -> 34, `two hundred four` -> 204, `one thousand` -> 1000, `negative five` -> -5; None unless s
    is only number words."""
    s = s.strip().rstrip(".")
    if not s or len(s) > 80 or not _WORD_NUMBER.fullmatch(s):
        return None
    low = s.lower()
    for sign in ("negative ", "minus "):
        if low.startswith(sign):
            n = words_to_int(s[len(sign):])
            return -n if n is not None else None
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


_CN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
             "九": 9}
_CN_UNIT = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}


def chinese_to_int(s: str) -> int | None:
    """`三十四` -> 34, `二千零二十五` -> 2025, `负五` -> -5 (Chinese / Japanese numerals); None unless s is one."""
    s = s.strip()
    neg = s[:1] in ("负", "負")
    s = s[1:] if neg else s
    if not s or len(s) > 20 or any(ch not in _CN_DIGIT and ch not in _CN_UNIT and ch not in _CN_BIG for ch in s):
        return None
    total = section = num = 0
    for ch in s:
        if ch in _CN_DIGIT:
            num = _CN_DIGIT[ch]
        elif ch in _CN_UNIT:
            section += (num or 1) * _CN_UNIT[ch]
            num = 0
        else:
            total += (section + num) * _CN_BIG[ch]
            section = num = 0
    total += section + num
    return -total if neg else total

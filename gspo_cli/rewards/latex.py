"""LaTeX brace groups in an answer: matching braces, unwrapping `\\cmd{inner}`, colour wrappers and struck-out text.
Pure functions, linear in the text (str.find scans), used by `normalize.clean` and the box finder (frames.py).
"""

from __future__ import annotations

import re

MAX_ANSWER_CHARS = 2000  # longer "answers" are not answers; bounds all work below

BOX_CMDS = ("\\boxed", "\\fbox", "\\framebox")
# Commands whose first brace groups are a colour (or two), then the value: `\textcolor{red}{34}`.
COLOR_CMDS = (("\\fcolorbox", 2), ("\\colorbox", 1), ("\\textcolor", 1))
_OPTIONAL_ARG = re.compile(r"\s*\[[^\]\n]{0,40}\]")
# Struck-out text is withdrawn (R3): `~~35~~`, `\sout{35}`, `<del>35</del>`.
_STRIKE_MD = re.compile(r"~~[^~\n]{1,200}~~")
_STRIKE_HTML = re.compile(r"<(del|s|strike)>[^<]{0,200}</\1>", re.IGNORECASE)
_STRIKE_HINT = re.compile(r"\\(?:sout|xout|x?cancel|bcancel|st)\{")
_STRIKE_CMDS = ("\\sout", "\\xout", "\\cancel", "\\xcancel", "\\bcancel", "\\st")


def blank_strikes(s: str) -> str:
    """s with struck-out text (`~~35~~`, `\\sout{35}`, `\\cancel{35}`, `<del>35</del>`) replaced by spaces."""
    if "~~" in s:
        s = _STRIKE_MD.sub(lambda m: " " * len(m.group(0)), s)
    if "<" in s:
        s = _STRIKE_HTML.sub(lambda m: " " * len(m.group(0)), s)
    if "\\" in s and _STRIKE_HINT.search(s):
        for cmd in _STRIKE_CMDS:
            i = s.find(cmd + "{")
            while i >= 0:
                end = find_group_end(s, i + len(cmd))
                if end < 0:
                    break
                s = s[:i] + " " * (end + 1 - i) + s[end + 1:]
                i = s.find(cmd + "{", i)
    return s


def unwrap_colors(s: str) -> str:
    """`\\colorbox{yellow}{34}` -> `34`, `\\fcolorbox{red}{white}{34}` -> `34`, `\\textcolor{red}{34}` -> `34`."""
    for cmd, skip in COLOR_CMDS:
        i = s.find(cmd)
        guard = 0
        while i >= 0 and guard < 16:
            guard += 1
            j = i + len(cmd)
            for _ in range(skip):
                m = _OPTIONAL_ARG.match(s, j)
                j = m.end() if m else j
                while j < len(s) and s[j] == " ":
                    j += 1
                end = find_group_end(s, j) if j < len(s) and s[j] == "{" else -1
                if end < 0:
                    break
                j = end + 1
            else:
                s = s[:i] + s[j:]
                i = s.find(cmd, i)
                continue
            i = s.find(cmd, j)
    return s


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


def unwrap_commands(s: str, cmds: tuple[str, ...], keep_inner: bool = True) -> str:
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
                        if cmd in BOX_CMDS:  # an unclosed box is a cut-off answer: leave it unreadable
                            start = j
                            continue
                        s = s[:i] + s[k + 1 :]
                    else:
                        inner = s[k + 1 : end] if keep_inner else ""
                        s = s[:i] + inner + s[end + 1 :]
                    hit = True
                    start = i
                elif cmd in BOX_CMDS and k > j:  # `\boxed 42`
                    s = s[:i] + s[k:]
                    hit = True
                    start = i
                else:
                    start = j
        if not hit:
            break
    return s

"""Boxes and frames in a final output (docs/verifier.md R1): `\\boxed{..}`, `\\fbox`, `\\framebox`, `\\makebox`,
`\\colorbox`, `\\fcolorbox`, `\\boxed 42`. Pure functions; one reverse `str.rfind` scan with a bounded number of hits.
"""

from __future__ import annotations

import re

from gspo_cli.rewards.latex import MAX_ANSWER_CHARS, find_group_end

MAX_LOOK = 256  # marker occurrences inspected per kind: bounded cost on a flood, room for repetition (R5e)


def boxes(t: str) -> tuple[list[tuple[int, str, int, int]], int]:
    """(position, inner text, inner start, end) of the last boxes and frames (nested braces allowed), and the
    position of an unclosed `\\boxed{` after all of them (-1 when there is none)."""
    found: list[tuple[int, str, int, int]] = []
    unclosed = -1
    i = t.rfind("box")  # one reverse scan serves every frame command
    looked = 0
    while i >= 0 and looked < MAX_LOOK:
        looked += 1
        j, skip = -1, 0
        if t.startswith("boxed", i):
            j = i + 5
            if j < len(t) and t[j] == "[":  # \boxed[..]{..}
                k = t.find("]", j, j + 40)
                j = k + 1 if k > 0 else j
        elif i > 0 and t[i - 1] == "f" and not t.startswith("colorbox", i - 6):
            j = i + 3  # \fbox
        elif t.startswith("framebox", i - 5) or t.startswith("makebox", i - 4):
            j = i + 3
            while j < len(t) and t[j] == "[":
                k = t.find("]", j, j + 40)
                j = k + 1 if k > 0 else len(t)
        elif t.startswith("colorbox", i - 5):
            j, skip = i + 3, 2 if t.startswith("fcolorbox", i - 6) else 1
        if j < 0:
            i = t.rfind("box", 0, i)
            continue
        for _ in range(skip):  # the colour arguments of \colorbox{c}{..} / \fcolorbox{c}{c}{..}
            if j < len(t) and t[j] == "{":
                end = find_group_end(t, j, 64)
                j = end + 1 if end > 0 else len(t)
        if j < len(t) and t[j] == "{":
            end = find_group_end(t, j, MAX_ANSWER_CHARS)
            if end > 0:
                found.append((i, t[j + 1:end], j + 1, end + 1))
            elif not found and unclosed < 0:
                unclosed = i
        elif j < len(t) and t[j] == " ":  # `\boxed 42`
            m = re.match(r" +([^\s$]{1,40})", t[j:j + 64])
            if m:
                found.append((i, m.group(1), j + m.start(1), j + m.end()))
        i = t.rfind("box", 0, i)
    found.reverse()
    return found, unclosed

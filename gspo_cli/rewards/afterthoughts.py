"""What a final output says after its first commitment (docs/verifier.md R3): remarks that offer another
candidate ("It might be 35 instead.") and withdrawals (retractions, corrections, refusals). Pure functions.
"""

from __future__ import annotations

import re

from gspo_cli.rewards import cues, prose
from gspo_cli.rewards.commit import _WORD_RUN, CANDIDATE, TERMINATOR, Statement, classify, locate
from gspo_cli.rewards.statements import value_key


def remarks(t: str, start: int, taken: list[int]) -> list[Statement]:
    """Candidates offered after the first commitment without an answer word ("It might be 35 instead.",
    "Or is it 35?", "Alternatively, 35.", "答案也可能是 35" is an answer sentence already)."""
    out: list[Statement] = []
    region = _leftover(t, start, taken)
    if not (_DIGIT_OR_CJK.search(region) or _WORD_RUN.search(region)) or not _offers(region):
        return out  # no value, or no hedge, question or alternative: no candidate
    pos = start
    for m in TERMINATOR.finditer(t, start):
        s0, s1 = pos, m.end()
        pos = s1
        _candidate(t, s0, s1, taken, out)
    if pos < len(t):
        _candidate(t, pos, len(t), taken, out)
    return out


_DIGIT_OR_CJK = re.compile(r"\d|[^\x00-\x7f]")
_OFFER_TOKENS = frozenset(p.split()[0] for c in (cues.ALT, cues.ALT_NEAR, cues.HEDGE, cues.IF, cues.COND)
                          for p in cues._PHRASES[c])


def _leftover(t: str, start: int, taken: list[int]) -> str:
    """t[start:] without the lines that hold a statement (their own words are read with them)."""
    region = t[start:]
    if "\n" not in region:
        return region
    out, pos = [], start
    for line in region.split("\n"):
        if not any(pos <= p < pos + len(line) + 1 for p in taken):
            out.append(line)
        pos += len(line) + 1
    return "\n".join(out)


def _offers(region: str) -> bool:
    """Whether a region may offer a candidate: a question mark, a hedge or alternative word, or a non-ASCII text."""
    if "?" in region or not region.isascii():
        return True
    return not _OFFER_TOKENS.isdisjoint(cues.tokens(region))


def _candidate(t: str, s0: int, s1: int, taken: list[int], out: list[Statement]) -> None:
    sentence = t[s0:s1]
    loc = locate(sentence)
    if loc is None or any(s0 <= p < s1 for p in taken):
        return
    mode, _ = classify(sentence[:loc[0]], sentence[loc[1]:])
    if mode != CANDIDATE:
        return
    toks = cues.tokens(sentence)
    cls = cues.classes(sentence, toks)
    bare = not sentence[:loc[0]].strip(" \t\n(*_$") and not sentence[loc[1]:].strip(" \t\n?？.)*_$")
    # an alternative ("35 instead", "or 35") always offers another answer; a hedge or a question only when it
    # is about the answer ("it might be 35", "Is it 35?", a bare "35?"), not about something else ("n = 5?")
    if cues.ALT in cls or cues.ALT_NEAR in cls or bare or not _REFERENCE.isdisjoint(toks) or (
            not sentence.isascii() and any(r in sentence for r in _REFERENCE_CJK)):
        out.append(Statement(s0, CANDIDATE, (value_key(sentence[loc[0]:loc[1]]),), "remark"))


_REFERENCE = frozenset("it it's that this answer result value total count cela ça es das это он она 它".split())
_REFERENCE_CJK = ("答案", "结果", "それ", "答え", "정답", "답")


_RETRACT_TOKENS = frozenset(tok for p in cues._PHRASES[cues.RETRACT] for tok in p.split()) - {
    "that", "this", "it", "is", "was", "the", "i", "a", "an", "my", "not", "be", "can't", "cannot", "above", "me", "es",
    "c'est", "est", "ist", "das", "è", "é", "está", "answer", "made", "count", "se"}
_RETRACT_CJK = tuple(cues._CJK[cues.RETRACT])


# A stem of a distinctive word of every retraction phrase (tests/rewards/test_scan_patterns.py checks every
# phrase of cues.RETRACT passes the `_maybe_retract` pre-filter).
RETRACT_STEMS = ("wrong", "incorr", "withdr", "correction", "erratum", "second thought", "mistak", "error", "scratc", "disreg", "ignore", "retrac", "not right",
                 "not correct", "be right", "is off", "faux", "trompé", "falsch", "stimmt nicht", "geirrt", "equivo",
                 "está mal", "falso", "errado", "errei", "sbagli", "errato", "неверн", "неправ", "ошиб")


# The stems grouped by their first letter (`e(?:rror|quivo)|...`): the same strings, one alternative tried per
# letter instead of every stem at every position (1.5x faster on a 100-character region).
_RETRACT_RE = re.compile("|".join(
    re.escape(c) + "(?:" + "|".join(re.escape(w[1:]) for w in RETRACT_STEMS if w[0] == c) + ")"
    for c in dict.fromkeys(w[0] for w in RETRACT_STEMS)))


_REVISE = re.compile(r"(?i)\W*(?:correction|erratum|corrigendum|on second thought)\b")


def _maybe_retract(text: str) -> bool:
    """A cheap test every retraction passes (a stem of its longest word), before the full cue reading."""
    if _RETRACT_RE.search(text.lower()):
        return True
    return not text.isascii() and any(w in text for w in _RETRACT_CJK)


def withdrawals(t: str, start: int) -> tuple[int, dict[str, int]]:
    """(end of the last withdrawal after `start`, or -1; {value: position} of retractions that name their value)."""
    cut, named = -1, dict[str, int]()
    region = t[start:]
    if not _maybe_retract(region) and not prose._REFUSAL_HINT.search(region):
        return cut, named  # most final outputs withdraw nothing: one scan of the region decides
    pos = start
    bounds = [(m.end()) for m in TERMINATOR.finditer(t, start)]
    for end in bounds + ([len(t)] if not bounds or bounds[-1] < len(t) else []):
        sentence = t[pos:end]
        s0, pos = pos, end
        if not sentence.strip():
            continue
        if _REVISE.match(sentence):  # "Correction: the answer is 35.": what it says replaces what came before
            cut = s0
            continue
        retract = _maybe_retract(sentence) and cues.RETRACT in cues.classes(sentence)
        if not retract:
            if prose.refusal_end(sentence) >= 0:
                cut = end
            continue
        loc = locate(sentence)
        if loc is not None:
            named[value_key(sentence[loc[0]:loc[1]])] = s0
        else:
            cut = end
    return cut, named

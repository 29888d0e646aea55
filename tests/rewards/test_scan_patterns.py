"""Speed rewrites of issue #32 read exactly as the plain forms they replace.

`re` skips ahead only for a pattern that starts with a literal or a character set; one that starts with a
lookbehind is tried at every position. `commit._NUM` and `prose._REFUSAL_HINT` are written to start with a
character set; each is checked here against its plain form on seeded random texts built from the pieces that
matter (signs, digits, the lookbehind's characters, the hint words): same spans, or the same absence. Also: the
retraction stems grouped by first letter, ASCII tokens, a plain integer with a plain aside, and the time limit
read from os.environ's own store. The two rewritten patterns each have a control (a one-character change caught).
"""

from __future__ import annotations

import random
import re

from gspo_cli.rewards import commit, cues, guard, prose
from gspo_cli.rewards.normalize import clean, parse_value

NUM_PLAIN = re.compile(r"(?<![\w.^_{}\\])[+-]?\d[\d,]*(?:\.\d+)?(?![a-z\d_{}^])")
HINT_PLAIN = re.compile(r"[nN](?:[oO][tT]|['’][tT]|[aA][bB][lL][eE])\s|[nN][sS][uU][fF]|[gG]ive up|[rR]an out|无法|不知道|做不出")

NUM_PIECES = list("0123456789+-,.a zZ_^{}\\$\n\t٣x−é(") + ["12", "3.5", "1,000", "\\cdot ", "a_", "^2", "{1"]
HINT_PIECES = list("nNoOtTaAbBlLeE'’ \t\nsSuUfFgGivpPrRx.") + [
    "not ", "NOT\n", "n't ", "n’t\t", "unable ", "insufficient", "give up", "Give up", "ran out", "Ran out", "无法",
    "不知道", "做不出", "无", "不", "做", "知道", "不出", "法", "note", "another", "ive up", "an out"]


def _texts(pieces: list[str], n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))


def _spans(p: re.Pattern[str], t: str) -> list[tuple[int, int]]:
    return [m.span() for m in p.finditer(t)]


def test_number_pattern_matches_where_the_plain_one_does():
    for t in _texts(NUM_PIECES, 60_000, seed=32):
        assert _spans(commit._NUM, t) == _spans(NUM_PLAIN, t), t
    for t in ("a+5", "1,2x", "x2", "-3", "+-4", "$-12$", "\\cdot 7", "3.5.", "1The", "٣", "{2", "}9"):
        assert _spans(commit._NUM, t) == _spans(NUM_PLAIN, t), t


def test_refusal_hint_matches_where_the_plain_one_does():
    for t in _texts(HINT_PIECES, 60_000, seed=32):
        assert _spans(prose._REFUSAL_HINT, t) == _spans(HINT_PLAIN, t), t


def test_the_comparison_bites():
    """Control: a pattern that differs from the plain one in one character is caught by the same texts."""
    wrong_num = re.compile(r"[+\-\d](?<![\w.^_{}].)(?:(?<=[+-])\d|(?<=\d))[\d,]*(?:\.\d+)?(?![a-z\d_{}^])")  # no `\\`
    wrong_hint = re.compile(r"[nNgGrR无不](?:(?<=[nN])(?:[oO][tT]|['’][tT]|[aA][bB][lL][eE])\s|(?<=[nN])[sS][uU][fF]"
                            r"|(?<=[gG])ive up|(?<=[rR])an out|(?<=无)法|(?<=不)知道|(?<=做)不出)")  # 做 dropped
    assert any(_spans(wrong_num, t) != _spans(NUM_PLAIN, t) for t in _texts(NUM_PIECES, 60_000, seed=32))
    assert any(_spans(wrong_hint, t) != _spans(HINT_PLAIN, t) for t in _texts(HINT_PIECES, 60_000, seed=32))


def test_the_limit_follows_the_environment(monkeypatch):
    """limit_s reads os.environ's own store: every change made through os.environ is seen at the next call."""
    monkeypatch.delenv("GSPO_REWARD_TIMEOUT_S", raising=False)
    assert guard.limit_s() == guard.DEFAULT_LIMIT_S
    monkeypatch.setenv("GSPO_REWARD_TIMEOUT_S", "2.5")
    assert guard.limit_s() == 2.5
    assert guard.limit_s() == 2.5
    monkeypatch.setenv("GSPO_REWARD_TIMEOUT_S", "0")
    assert guard.limit_s() == 0.001
    monkeypatch.setenv("GSPO_REWARD_TIMEOUT_S", "soon")
    assert guard.limit_s() == guard.DEFAULT_LIMIT_S
    monkeypatch.delenv("GSPO_REWARD_TIMEOUT_S")
    assert guard.limit_s() == guard.DEFAULT_LIMIT_S


def test_a_plain_integer_with_a_plain_aside_is_its_integer():
    """values() returns a plain integer's own value when its aside adds none (`\\boxed{34}$.`) without the full
    reading (clean, then parse); both give the same value."""
    rng = random.Random(32)
    for _ in range(20_000):
        c = (rng.choice(["", "  ", "\t"]) + rng.choice(["", "$"]) + rng.choice(["", "+", "-"])
             + "".join(rng.choice("0123456789") for _ in range(rng.choice([1, 2, 3, 5, 12, 30])))
             + rng.choice(["", "$"]) + rng.choice(["", "."]) + rng.choice(["", " "]))
        full = [commit._key(parse_value(clean(c)))]  # what the full reading of values() gives for it
        assert commit.values(c, "$.") == commit.values(c) == full, c
    assert commit.values("34", "(that is, 35)") == ["34", "35"]  # an aside that adds a value is still read


def test_ascii_tokens_are_the_unicode_tokens():
    """cues.tokens reads an ASCII text with `[a-z0-9]` for `[^\\W_]`: the same characters once lower-cased."""
    for code in range(128):
        ch = chr(code).lower()
        assert bool(re.fullmatch(r"[^\W_]", ch)) == bool(re.fullmatch(r"[a-z0-9]", ch)), repr(ch)
    pieces = list("aZ09_'.-? \t\n,;:$(") + ["e.g.", "isn't", "i.e.", "z.B.", "3.5", "well-known", "x2"]
    for t in _texts(pieces, 40_000, seed=32):
        low = t.lower()
        assert cues._TOKEN_ASCII.findall(low) == cues._TOKEN.findall(low), t


def test_retraction_stems_grouped_by_letter_find_what_the_plain_alternation_finds():
    from gspo_cli.rewards import afterthoughts

    plain = re.compile("|".join(re.escape(w) for w in afterthoughts.RETRACT_STEMS))
    pieces = [w[:k] for w in afterthoughts.RETRACT_STEMS for k in (1, len(w) - 1, len(w))] + list(" x.\n")
    for t in _texts(pieces, 40_000, seed=32):
        assert bool(afterthoughts._RETRACT_RE.search(t)) == bool(plain.search(t)), t
    assert all(afterthoughts._RETRACT_RE.fullmatch(w) for w in afterthoughts.RETRACT_STEMS)


def test_every_retraction_phrase_passes_the_stem_prefilter():
    """`_maybe_retract` is a cheap pre-filter before the cue reading: a retraction phrase it misses would never be
    read as one. Control: a sentence without a retraction fails it."""
    from gspo_cli.rewards import afterthoughts, cues

    phrases = [*cues._PHRASES[cues.RETRACT], *cues._CJK[cues.RETRACT]]
    assert phrases and [p for p in phrases if not afterthoughts._maybe_retract(p)] == []
    assert not afterthoughts._maybe_retract("The answer is 35.")

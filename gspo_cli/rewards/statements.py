"""Finding the statements about the answer in a final output (docs/verifier.md R1, R3). Pure functions.

- marked answers: an answer label in any language followed by a colon (found at each `:` / `：`, the word
  before it read), an English label followed by `=`, an arrow or a dash or standing as a heading (found at each
  `answer` word), and boxes and frames (answer tags and GSM8K's `####` are read as the label: `extract._denoise`);
- structured fields (`gspo_cli.rewards.structured`); answer sentences ("the answer is N", "答案是 N", "N is the
  answer"); the conclusion sentence right before the first marked answer, and the one ending the response;
- (in rewards/afterthoughts.py) remarks after the first commitment that offer another candidate ("It might be 35
  instead."), and withdrawals: retractions, corrections, refusals; boxes and frames are found by rewards/frames.py.

Each is a `commit.Statement`. Scans are reverse `str.rfind` loops (C speed) with a bounded number of hits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import attrgetter

from gspo_cli.rewards import cues, prose, structured
from gspo_cli.rewards.commit import (
    CANDIDATE,
    COMMITTED,
    TERMINATOR,
    Statement,
    asserted,
    classify,
    locate,
    located_key,
    mode_at,
    negated_in,
    sentence_bounds,
    unabbrev,
    values,
)
from gspo_cli.rewards.frames import MAX_LOOK, boxes
from gspo_cli.rewards.normalize import clean
from gspo_cli.rewards.prose import content_at

ANSWER, ALTERNATIVE = structured.ANSWER, structured.ALTERNATIVE

# Answer labels (R1a), lower case. Latin-script labels need a word boundary before them; CJK ones do not.
_LATIN_LABELS = {w: ANSWER for w in (
    "answer", "final", "final answer", "the answer", "the final answer", "ans", "antwort", "endgültige antwort", "réponse",
    "reponse", "réponse finale", "respuesta", "respuesta final", "resposta", "resposta final", "risposta",
    "risposta finale", "ответ", "окончательный ответ", "итоговый ответ")}
_LATIN_LABELS.update({w: ALTERNATIVE for w in (
    "alternative", "alternative answer", "another possible answer", "other possible answer", "other answer",
    "second answer", "backup", "backup answer", "second candidate", "alternativa", "autre réponse")})
_LATIN_SORTED = sorted(_LATIN_LABELS.items(), key=lambda kv: -len(kv[0]))
_BY_LAST: dict[str, list[tuple[str, str]]] = {}
for _w, _k in _LATIN_SORTED:
    _BY_LAST.setdefault(_w.split()[-1], []).append((_w, _k))
_CJK_LABELS = (("最终答案", ANSWER), ("最後の答え", ANSWER), ("备选答案", ALTERNATIVE), ("其他答案", ALTERNATIVE),
               ("答案", ANSWER), ("答え", ANSWER), ("解答", ANSWER), ("答", ANSWER), ("정답", ANSWER), ("답", ANSWER))
_PAREN_TAIL = re.compile(r"\s*[(（][^()（）\n]{0,24}[)）]\s*$")
_COLON = re.compile(r"[ \t*_]{0,6}[:：]")
_SEP = re.compile(r"[ \t*_]{0,6}(?:=|→|->|⟹|⇒|[—–]|-(?=\s))(?!=)")  # a dash after a label is a separator
_NEXT_MARKER = re.compile(r"(?i)(?:final\s*)?answer\s*\**\s*[:：]|\*\*\s*final answer|\\boxed|\\fbox")
# Answer words for answer sentences in texts that are not ASCII (English `answer` is found in every text).
# (tail searched for, letters before it that belong to the word, whether a word boundary must precede the word)
_SENTENCE_WORDS = (("éponse", 1, True), ("ÉPONSE", 1, True), ("ntwort", 1, True), ("espuesta", 1, True),
                   ("sposta", 2, True), ("твет", 1, True), ("ТВЕТ", 1, True), ("答案", 0, False), ("答え", 0, False),
                   ("정답", 0, False), ("답", 0, True))
# Words that may stand between an answer word and its value ("the answer to the problem is", "答案是").
_COPULA = frozenset("is was are be been being equals equal lies lie est est-elle ist es é è sein ser être essere "
                    "seja sia sera será равен равна равно будет быть это".split())
_FILLER = frozenset("the final correct right to this that these problem question part here then therefore thus so "
                    "indeed simply just exactly clearly now we get obtain of our my overall total required desired "
                    "la le die der el a o il de du des del dem den des da do".split())
_LINK_OK = _COPULA | _FILLER | {t for ps in cues._PHRASES.values() for p in ps for t in p.split()} | {
    t for ps in cues._REL_BEFORE.values() for p in ps for t in p.split()}


@dataclass
class Found:
    """The statements of one final output, and what the empty-answer and cut-off rules need."""

    statements: list[Statement] = field(default_factory=list)
    unclosed: int = -1  # position of a `\\boxed{` that never closes after every marked answer
    flood: bool = False


_LAST_WORDS = frozenset(w.split()[-1] for w in _LATIN_LABELS)


def _last_word(head: str) -> str:
    """The word right before a colon (markup and a short parenthetical remark skipped), lower case."""
    h = head.rstrip(" \t*_`")
    if h[-1:] in (")", "）"):
        k = max(h.rfind("("), h.rfind("（"))
        h = h[:k].rstrip(" \t*_`") if 0 <= k >= len(h) - 26 else h
    j = len(h)
    while j > 0 and h[j - 1].isalpha() and len(h) - j < 24:
        j -= 1
    return h[j:].lower()


_ENDINGS = frozenset(w[-2:] for w in _LAST_WORDS)
_LAST_CHARS = (frozenset(w[-1] for w in _LAST_WORDS) | frozenset(w[-1].upper() for w in _LAST_WORDS)
               | frozenset(" \t*_`)\"'）") | frozenset(w[-1] for w, _ in _CJK_LABELS))


def _label(head: str) -> tuple[str, int] | None:
    """(kind, start of the label in head) when head (the text before a colon) ends with an answer label."""
    end = head.rstrip(" \t*_`)）")[-2:].lower()
    if end.isascii() and end not in _ENDINGS:
        return None  # most colons ("Step 1:", "double-check:", `a:b`) end no label: two characters decide
    line = head[head.rfind("\n") + 1:]
    whole = line.strip(" \t*_#>`").lower()
    if whole in _LATIN_LABELS:  # the line is the label: `Answer`, `**Final Answer`, `ANSWER`
        return _LATIN_LABELS[whole], len(head) - len(line) + line.lower().find(whole)
    word = _last_word(head)
    if not word or (word.isascii() and word not in _LAST_WORDS):
        return None  # most colons ("Step 1:", "Note:", `a:b`) end no label
    raw = line.rstrip()
    if not raw or raw[-1] in "\"'":  # a JSON key: read by `structured`
        return None
    h = _PAREN_TAIL.sub("", raw.rstrip(" \t*_`")).rstrip(" \t*_`")
    low = h.lower()
    for label, kind in _BY_LAST.get(word, ()):  # the labels ending in that last word
        if low.endswith(label):
            k = len(low) - len(label)
            if k and low[k - 1].isalpha():  # part of another word; `0Answer:` (glued to a value) is a label
                continue
            pre = re.split(r"[:.;!?$})\]]", low[:k])[-1].strip(" \t*_#>`-")
            if len(pre.split()) > 3:
                return None
            return kind, len(head) - len(line) + k
    if not low.isascii():
        for word, kind in _CJK_LABELS:
            if h.endswith(word) and len(h.strip(" \t*_#>`")) <= len(word) + 6:
                return kind, len(head) - len(line) + len(h) - len(word)
    return None


def _glued(content: str) -> str:
    """`Answer: 1Answer: 0`, `Answer: 1\\fbox{0}`: the next marker starts another answer."""
    if "nswer" in content or "NSWER" in content or "box" in content:
        lead = next((k for k, ch in enumerate(content) if ch.isalnum()), len(content))
        m = _NEXT_MARKER.search(content, lead + 1)
        if m is not None:
            return content[:m.start()]
    return content


def _read(t: str, pos: int, kind: str, cs: int, content: str, aside: str = "", alternative: bool = False,
          numeric: bool = True) -> Statement:
    """The statement of a marked answer or a field whose content starts at t[cs]."""
    vals = tuple(values(content, aside))
    if _plain(t, pos, kind, content, aside):  # `Answer: 34`, `\boxed{34}` on its own line: nothing to read
        return Statement(pos, CANDIDATE if alternative else COMMITTED, vals, kind, content, plain=not alternative)
    loc = locate(content)
    i, j = (cs + loc[0], cs + loc[1]) if loc else (cs, cs + len(content.rstrip()))
    mode, op = mode_at(t, i, j)
    if mode is not None and op is not None and not numeric:  # `x \\le 3` is an answer for a symbolic truth
        mode, op = COMMITTED, None
    if mode is None:
        return Statement(pos, "ignored", (), kind, content)
    if alternative and mode == COMMITTED:
        mode = CANDIDATE
    if op is not None and loc is not None:
        vals = (value_key(content[loc[0]:loc[1]]),)
    return Statement(pos, mode, vals, kind, content, op)


_PLAIN_VALUE = re.compile(r"[ \t$*]*[+-]?\d{1,30}[ \t$*]*\.?[ \t$*]*")
_PLAIN_AROUND = re.compile(r"[ \t$*_#>`.\\\[\]{}]*")  # markup, math delimiters and `\[`, `\]`, `\boxed{`, `}`


def _plain(t: str, pos: int, kind: str, content: str, aside: str) -> bool:
    """A marked answer that is a plain integer alone on its line (markup and LaTeX delimiters aside)."""
    if not _PLAIN_VALUE.fullmatch(content) or (aside and not _PLAIN_AROUND.fullmatch(aside)):
        return False
    line = t[t.rfind("\n", 0, pos) + 1:pos]
    if kind == "box":
        return bool(_PLAIN_AROUND.fullmatch(line))
    return not line.strip(" \t*_#>`")


def value_key(token: str) -> str:
    """The value key of a located value token (digits, number words or CJK numerals)."""
    k = located_key(token)
    return k if k is not None else token


def _colon_labels(t: str, numeric: bool) -> list[Statement]:
    out: list[Statement] = []
    last = _LAST_CHARS
    rfind = t.rfind
    for sep in (":", "：") if not t.isascii() else (":",):
        i = rfind(sep)  # C speed, from the end; the character before a colon decides whether it is read
        while i > 0 and len(out) < MAX_LOOK:
            if t[i - 1] in last:  # "Step 1:", `a:b`, "double-check:" end no label
                head = t[max(0, i - 48):i]
                lab = _label(head)
                if lab is not None:
                    kind, j = lab
                    cs, content = content_at(t, i + 1)
                    pos = i - len(head) + j
                    out.append(_read(t, pos, "line", cs, _glued(content), alternative=kind == ALTERNATIVE,
                                     numeric=numeric))
            i = rfind(sep, 0, i)
    return out


def _answer_words(t: str) -> list[tuple[int, int]]:
    """(start, end) of the last English `answer` words (any case) standing as words, and in a text that is not
    ASCII the answer words of other languages; at most MAX_LOOK of each."""
    hits: list[tuple[int, int]] = []
    for tail in ("nswer",):  # `ANSWER:` is a colon label (found at its colon); an upper-case sentence is no answer
        i = t.rfind(tail)
        looked = 0
        while i >= 1 and looked < MAX_LOOK:
            looked += 1
            # a word, not part of one or of a key name (`final_answer`, `"answer"` are read by `structured`)
            if t[i - 1] in "aA" and not (i >= 2 and (t[i - 2].isalpha() or t[i - 2] in "_\"'")) \
                    and t[i + 5:i + 6] not in ("_", '"', "'"):
                hits.append((i - 1, i + 5))
            i = t.rfind(tail, 0, i)
    if not t.isascii():
        for tail, back, boundary in _SENTENCE_WORDS:
            i = t.rfind(tail)
            looked = 0
            while i >= 0 and looked < 32:
                looked += 1
                start = max(0, i - back)
                if not (boundary and start > 0 and t[start - 1].isalpha()):
                    hits.append((start, i + len(tail)))
                i = t.rfind(tail, 0, i)
    return hits


def _link_ok(link: str) -> bool:
    """Whether the words between an answer word and a value link them ("is", "might be", "答案是", "равен")."""
    s = link.strip(" \t*_$:：,，—-=()")
    if not s:
        return True
    if not s.isascii():
        return len(s) <= 12 or all(tok in _LINK_OK for tok in cues.tokens(s))
    return all(tok in _LINK_OK for tok in cues.tokens(s))




def _sentence_or_label(t: str, hit: tuple[int, int], numeric: bool) -> Statement | None:
    """An answer word that is an `=`/arrow label, a heading label, or the subject of an answer sentence."""
    p, e = hit
    if _COLON.match(t, e):
        return None  # a colon label: read by _colon_labels
    m = _SEP.match(t, e)
    if m is not None:
        cs, content = content_at(t, m.end())
        return _read(t, p, "line", cs, _glued(content), numeric=numeric)
    line_start = t.rfind("\n", 0, p) + 1
    line_end = t.find("\n", e)
    line_end = len(t) if line_end < 0 else line_end
    if (not t[e:line_end].strip(" \t*_#:")) and t[line_start:p].strip(" \t*_#>").lower() in ("", "final", "the final",
                                                                                                "my final", "my"):
        cs, content = content_at(t, line_end)  # a heading: the value is on the next line
        if "box" in content:
            return None  # `**Final Answer**` over `\[\boxed{34}\]`: the box is the statement
        if content.strip():
            return _read(t, p, "line", cs, _glued(content), numeric=numeric)
        return None
    lead = prose.VALUE_FIRST.search(t, max(0, p - 40), e)  # "34 is the final answer.": the value begins the sentence
    if lead is not None and t[e:e + 1] in (".", "!", "\n", ""):
        mode, _ = classify("", t[e:sentence_bounds(t, p, e)[1]])
        return Statement(lead.start(1), mode or "ignored", (value_key(lead.group(1)),), "sentence", lead.group(1))
    window = t[e:e + 80]
    loc = locate(window)
    if loc is None:
        return None
    vs, ve = e + loc[0], e + loc[1]
    link = t[e:vs]
    if "box" in link or TERMINATOR.search(unabbrev(link)) or not _link_ok(link):
        return None  # "the answer is $\\boxed{34}$": the box is the statement (read with this sentence)
    s0, s1 = sentence_bounds(t, vs, ve)
    span = re.split(r"\\boxed|\\fbox", t[vs:s1], maxsplit=1)[0]  # a box is a commitment of its own
    mode, op = classify(t[s0:vs], t[ve:s1])
    if mode is None:
        return Statement(p, "ignored", (), "sentence")
    if op is not None and not numeric:
        mode, op = COMMITTED, None
    if op is not None:
        return Statement(p, mode, (value_key(t[vs:ve]),), "sentence", op=op)
    vals = asserted(clean(span) or span, words=True)
    if not t[vs:ve].lstrip("-−+ ")[:1].isdigit():  # a number word stated first, even a short one (`five (-5)`)
        first = value_key(t[vs:ve])
        if first not in vals:
            vals.insert(0, first)
    aside = t[ve:s1].lstrip(" \t$*_}")
    if not (re.search(r"(?i)\bif\b|\bor\b|\bunless\b|\botherwise\b|\belse\b|\beither\b", span)
            or aside[:1] in ("(", "（", ",", "，", "=")):
        vals = vals[:1]
    vals = [k for k in vals if not negated_in(span, k)] or vals  # `the answer is 23, not 32` states 23
    return Statement(p, mode, tuple(vals), "sentence", span.strip())


_CONCLUSION = re.compile(r"(?i)^\W*(?:therefore|thus|hence|so|in total|in conclusion|altogether|finally|donc|"
                         r"daher|also|entonces|por lo tanto|portanto|quindi|поэтому|итак)\b|^\W*(?:因此|所以|故|综上|"
                         r"总共|一共|したがって|よって|따라서)")


def conclusion_before(t: str, pos: int) -> Statement | None:
    """The conclusion sentence ("Thus there are 30 ways.") ending right before the marker at pos (R1d)."""
    head = t[max(0, pos - 240):pos].rstrip(" \t\r\n*#$\\[")
    if head[-14:].lower().rstrip(":").endswith("final answer"):  # a "**Final Answer**" heading
        head = head[:head.lower().rfind("final answer")].rstrip(" \t\r\n*#")
    if not head.endswith((".", "!", "?", ":", "。", "！", "？", "：")):
        return None
    body = head[:-1]
    start = max(body.rfind(". "), body.rfind("! "), body.rfind("? "), body.rfind("\n"), body.rfind(": "))
    if not body.isascii():
        start = max(start, body.rfind("。"), body.rfind("！"), body.rfind("？"))
    start += 1
    sentence = body[start:]
    if not _CONCLUSION.match(sentence):
        return None
    vals = asserted(sentence)  # raw text: `$34$` reads as 34, `12{,}000` states no value here
    # A sentence naming several numbers ("Hence there are 34 ways, where 3 are symmetric.") states no single
    # value: not a commitment, the marked answer decides.
    if len(vals) != 1:
        return None
    loc = locate(sentence)
    if loc is None:
        return None
    mode, _ = classify(sentence[:loc[0]], sentence[loc[1]:])
    s_pos = pos - len(t[max(0, pos - 240):pos]) + start
    return Statement(s_pos, mode, tuple(vals), "conclusion") if mode == COMMITTED else None


def find(t: str, numeric: bool = True) -> Found:
    """Every statement about the answer in the final output t (R1), in order of position."""
    out = Found()
    stmts = _colon_labels(t, numeric)
    box_list, out.unclosed = boxes(t)
    if stmts and box_list and box_list[0][2] <= stmts[0].pos and stmts[-1].pos < box_list[-1][3]:  # labels, last first:
        # `\boxed{\text{Answer: } 34}`: a label inside a box is part of the box's statement
        stmts = [st for st in stmts if not any(b[2] <= st.pos < b[3] for b in box_list)]
    for pos, inner, start, end in box_list:
        line_end = t.find("\n", end, end + 200)
        aside = t[end:line_end if line_end >= 0 else end + 200]
        stmts.append(_read(t, pos, "box", start, inner, aside, numeric=numeric))
    for pos, kind, vpos, text in structured.json_fields(t) + structured.table_fields(t):
        stmts.append(_read(t, pos, "field", vpos, text, alternative=kind == ALTERNATIVE, numeric=numeric))
    # one pass each over the few statements (plain loops: cheaper than generator expressions per response)
    lines = 0
    taken = set()
    for st in stmts:
        taken.add(st.pos)
        if st.kind == "line":
            lines += 1
    out.flood = lines >= MAX_LOOK or len(box_list) >= MAX_LOOK
    for hit in _answer_words(t):
        if hit[0] in taken:
            continue
        s = _sentence_or_label(t, hit, numeric)
        if s is not None:
            stmts.append(s)
            taken.add(s.pos)
    first = -1
    for st in stmts:
        if st.kind in _MARKED_KINDS and (first < 0 or st.pos < first):
            first = st.pos
    c = conclusion_before(t, first) if first >= 0 else None
    if c is not None:
        stmts.append(c)
    stmts.sort(key=_POS)
    out.statements = stmts
    return out


_MARKED_KINDS = ("line", "box", "field")


_POS = attrgetter("pos")


def prose_statement(t: str, answer: str, stmts: list[Statement] = ()) -> Statement | None:  # type: ignore[assignment]
    """The statement a concluding statement (R1e) makes: its answer read in the sentence that holds it (the
    answer sentence already read there, when there is one)."""
    i = t.rfind(answer) if answer else -1
    for s in reversed(stmts):
        if s.kind == "sentence" and s.pos < i <= s.pos + 120 and t.find(answer, s.pos) == i:
            return s
    if i < 0:
        r = prose.read_prose_answer(answer)
        return Statement(max(0, len(t) - 1), COMMITTED, tuple(values(r or answer)), "prose", answer)
    loc = locate(answer)
    j, k = (i + loc[0], i + loc[1]) if loc else (i, i + len(answer))
    mode, op = mode_at(t, j, k)
    if mode is None:
        return Statement(i, "ignored", (), "prose", answer)
    return Statement(i, mode, tuple(values(answer)), "prose", answer, op)

"""Find the final answer of a model response. Pure functions, no I/O.

The final-answer rule (the same for training, both engines, and evaluation: everything goes through
`compute_score`):

1. **Answer region.** Text after a leading chat-template token and before the first end-of-turn token. With
   Qwen3 thinking, only the text after the last `</think>` counts; a `<think>` that is never closed is a
   response cut off while thinking and has no answer, whatever it says inside.
2. **Refusals void what precedes them.** "I cannot determine the answer", "cannot be determined", "unable to
   solve", "I don't know", "not enough information", "无法确定": an answer counts only when it is written after
   the last refusal (an `Answer:` line followed by "Actually, I cannot determine the answer." has none).
3. **Marked answers.** The last `Answer:` line (also `**Answer:**`, `\\text{Answer: }` inside `$...$`,
   `$$...$$` or `\\[...\\]`, `Réponse :`, `答案：`, GSM8K's `####`) and the last `\\boxed{}`/`\\fbox{}`.
   Style "dapo" prefers the `Answer:` line, style "boxed" the box; when the preferred one states no value and
   a later one of the other kind does, the later one. When markers exist but the last of each is empty
   (`\\boxed{}`, `Answer:` with nothing after it) the response has no answer: the body is never read instead.
   A `\\boxed{` that is never closed after the last marked answer is a cut-off answer: no answer.
4. **One value** (issue #22): commitments (every box and `Answer:` line in the final output, "the answer is
   N" sentences, the conclusion sentence before the first marked answer; see `gspo_cli.rewards.commit`) must
   agree on one value; negated, conditional and exemplary mentions are not commitments; 16 or more marked
   answers of one kind are a flood, not an answer.
5. **Concluding statement** (only when there is no marked answer; see `gspo_cli.rewards.prose`): "the answer
   is N", a short response that is itself an answer, a last line that is a number, a "therefore ... N"
   sentence, a final `[N]` or `$...$`, read in the last PROSE_TAIL characters, and only when the statement
   ends the response (at most a closing remark such as "I hope it is correct." after it). A number that
   merely appears in the body, a response cut off mid-sentence, and an answer only inside the thinking are
   never an answer.

The answer found is then compared with the ground truth by `gspo_cli.rewards.score.judge` (exact numbers,
math-verify for symbolic ground truths); `clean` accepts the forms a grader accepts on the answer line:
units after the number (`12 \\text{ m}^2`, `45^\\circ`, `25\\%`), LaTeX spacing inside numbers (`1\\!,\\!024`,
`1\\,024`, `1{,}024`), `\\dfrac`/`\\tfrac`, terminal colour codes and mojibake, a stray closing brace.

Cost is linear in the response: one regex pass finds chat-template markers, marked answers are found by
reverse `str.rfind` scans of the final output, at most 16 candidates of each kind are read, every brace group and answer is length-capped, refusals
are looked for only after the chosen answer, and the prose readers only look at the last PROSE_TAIL
characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gspo_cli.rewards.commit import answer_sentences, conclusion_before, is_mention, negated_after, values
from gspo_cli.rewards.normalize import MAX_ANSWER_CHARS, TOO_BIG, clean, find_group_end, parse_value
from gspo_cli.rewards.prose import concluding_statement, read_prose_answer, refusal_end, take_content

STYLES = ("dapo", "boxed")
MAX_CANDIDATES = 16  # per kind; enough to see hedging, bounded cost on floods of markers
WINDOW = 6000  # commitments are read in the last WINDOW characters of the final output (see `extract`)
_MAX_LOOK = 256  # marker-word occurrences inspected per kind (a flood of "answer" words costs nothing more)

_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "</s>", "<|im_start|>")
_MARKERS = re.compile(r"</?think>|<\|(?:im_end|endoftext|eot_id|end_of_text|end|im_start)\|>|</s>")
_LEAD_TOKEN = re.compile(r"\s*(?:<\|im_start\|>(?:assistant\s)?|<s>|<\|begin_of_text\|>)")
# (tail searched for, heads that may precede it): "Answer", "answer", "ANSWER", "Réponse", "答案".
_TAILS = (("nswer", ("a", "A")), ("NSWER", ("A",)))
_NON_ASCII_TAILS = (("éponse", ("r", "R")), ("ÉPONSE", ("R",)), ("案", ("答",)), ("espuesta", ("r", "R")))
_COLON = re.compile(r"[ \t*_]{0,6}[:：]")
_NEXT_MARKER = re.compile(r"(?i)(?:final\s*)?answer\s*\**\s*[:：]|\*\*\s*final answer|\\boxed|\\fbox")
_WORD = re.compile(r"(?<![\\A-Za-z])[^\W\d_]{2,}")  # a word of letters, not a LaTeX command name


@dataclass(frozen=True)
class Extraction:
    """The answer text found (None when there is none) and how it was found, or why not."""

    answer: str | None
    how: str


def answer_region(text: str) -> tuple[str | None, str]:
    """The part of a response that may hold the final answer, or (None, reason).

    One regex pass finds every chat-template marker; most responses have none and cost just that pass.
    """
    m = _LEAD_TOKEN.match(text)
    if m and m.end() > 0:
        text = text[m.end() :]
    marks = [(mm.start(), mm.group(0)) for mm in _MARKERS.finditer(text)] if "<" in text else []
    if marks:
        cut = next((i for i, tok in marks if tok in _END_TOKENS), len(text))
        text = text[:cut]
        close = [i for i, tok in marks if tok == "</think>" and i < cut]
        start = close[-1] + len("</think>") if close else 0
        if any(tok == "<think>" and start <= i < cut for i, tok in marks):
            return None, "unclosed_think"
        text = text[start:]
    if text.rstrip().endswith("|>"):
        # `...\boxed{42}im_end|>`: a chat-template token that lost its `<|`; the generation is corrupt.
        return None, "malformed_special_token"
    return text, "ok"


def answer_lines(t: str) -> list[tuple[int, str]]:
    """(position, content) of every `Answer:` marker (answer/Answer/ANSWER, markdown allowed), last MAX_CANDIDATES.

    Searched without lower-casing the text (a copy of it): the tails "nswer"/"NSWER" are found in C, the first
    letter and the colon are checked at each hit.
    """
    found: list[tuple[int, str]] = []
    words = _TAILS if t.isascii() else _TAILS + _NON_ASCII_TAILS
    for tail, heads in words:
        i = t.rfind(tail)
        hits = looked = 0
        while i >= 0 and hits < MAX_CANDIDATES and looked < _MAX_LOOK:
            looked += 1
            h = i - len(heads[0])
            if h >= 0 and t[h:i] in heads:
                m = _COLON.match(t, i + len(tail))
                if m:
                    content = take_content(t, m.end())
                    # `Answer: 1Answer: 0`, `Answer: 1\\fbox{0}`: the next marker starts another answer
                    glued = None
                    if "nswer" in content or "NSWER" in content or "box" in content:
                        lead = next((k for k, ch in enumerate(content) if ch.isalnum()), len(content))
                        glued = _NEXT_MARKER.search(content, lead + 1)
                    found.append((h, content[:glued.start()] if glued else content))
                    hits += 1
            i = t.rfind(tail, 0, i)
    i = t.rfind("####")  # GSM8K's final-answer marker; a markdown heading ("#### Step 2") is not one
    if i >= 0 and (i == 0 or t[i - 1] != "#"):
        content = take_content(t, i + 4)
        if parse_value(clean(content)) is not None:
            found.append((i, content))
    found.sort()
    return found[-MAX_CANDIDATES:]


def boxed_answers(t: str) -> tuple[list[tuple[int, str, int]], int]:
    """(position, inner text, end) of the last `\\boxed{..}` / `\\fbox{..}` groups (nested braces allowed), and
    the position of an unclosed `\\boxed{` after all of them (-1 when there is none)."""
    found: list[tuple[int, str, int]] = []
    unclosed = -1
    i = t.rfind("box")  # one reverse scan serves both commands
    looked = 0
    while i >= 0 and len(found) < MAX_CANDIDATES and looked < _MAX_LOOK:
        looked += 1
        if t.startswith("boxed", i):
            j = i + 5
        elif i > 0 and t[i - 1] == "f":
            j = i + 3
        else:
            i = t.rfind("box", 0, i)
            continue
        if j < len(t) and t[j] == "{":
            end = find_group_end(t, j, MAX_ANSWER_CHARS)
            if end > 0:
                found.append((i, t[j + 1 : end], end + 1))
            elif not found and unclosed < 0:
                unclosed = i
        elif j < len(t) and t[j] == " ":  # `\boxed 42`
            m = re.match(r" +([^\s$]{1,40})", t[j : j + 64])
            if m:
                found.append((i, m.group(1), j + m.end()))
        i = t.rfind("box", 0, i)
    found.reverse()
    return found, unclosed


def _refine(content: str) -> str:
    """An `Answer:` line written as a sentence ("The volume of $V$ is 120."): keep the number it states.

    Only for real prose (two or more words); `Answer: eval('42')` or `Answer: 42{{{` stay as written and
    so are not read as 42.
    """
    if len(_WORD.findall(content)) < 2:
        return content
    r = read_prose_answer(content)
    return r if r is not None else content


def _commitments(t: str, lines: list, boxes: list) -> list[list[str]]:
    """The values each commitment of the final output t asserts (see gspo_cli.rewards.commit)."""
    out = [values(c) for _, c in lines]  # an answer line's content already runs to the end of its line
    for _, c, end in boxes:
        line_end = t.find("\n", end, end + 200)
        out.append(values(c, t[end:line_end if line_end >= 0 else end + 200]))
    out.extend(answer_sentences(t))
    first = min([p for p, _ in lines] + [p for p, _, _ in boxes], default=-1)
    if first >= 0:
        out.append(conclusion_before(t, first))
    return [v for v in out if v]


def _disagree(commits: list[list[str]]) -> bool:
    """A commitment with two values, or two commitments with different values."""
    seen = {v for vals in commits for v in vals}
    return len(seen) > 1


def _marked(t: str) -> tuple[list, list, int]:
    """Answer lines, boxes, and the position of a box left unclosed after them (-1 when none), in t."""
    lines, (boxes, unclosed) = answer_lines(t), boxed_answers(t)
    return lines, boxes, unclosed


def _pick(lines: list, boxes: list, style: str) -> tuple[int, str, str] | None:
    """(position, answer, how) of the final marked answer, or None when the last of each kind is empty."""
    picks = []  # the last usable candidate of each kind, preferred kind first
    kinds = ((lines, "answer_line"), ([(p, c) for p, c, _ in boxes], "boxed"))
    for cands, how in kinds[:: 1 if style == "dapo" else -1]:
        if cands and clean(cands[-1][1]):
            pos, content = cands[-1]
            picks.append((pos, _refine(content) if how == "answer_line" else content, how))
    if not picks:
        return None
    first = picks[0]
    if len(picks) == 2 and picks[1][0] > first[0] and parse_value(clean(first[1])) is None:
        # "**Answer:** see below" ... "\\boxed{42}": the preferred kind states no value, a later one does
        if parse_value(clean(picks[1][1])) is not None:
            return picks[1]
    return first


def _from_prose(t: str) -> Extraction:
    """No marked answer: a concluding statement, unless an answer sentence commits to another value."""
    answer, how = concluding_statement(t)
    if answer is not None and _disagree([values(answer), *answer_sentences(t[-WINDOW:])]):
        return Extraction(None, "conflict")
    return Extraction(answer, how)


def _decide(t: str, lines: list, boxes: list, unclosed: int, style: str) -> Extraction:
    """The one committed value among the marked answers of t, or why there is none."""
    if len(lines) >= MAX_CANDIDATES or len(boxes) >= MAX_CANDIDATES:
        return Extraction(None, "too_many_answers")  # a flood of markers is not one committed value
    lines = [c for c in lines if not is_mention(t, c[0]) and not negated_after(c[1])]
    boxes = [b for b in boxes if not is_mention(t, b[0], b[2])]
    if not lines and not boxes:
        if unclosed >= 0:  # "So the final answer is $\\boxed{34": cut off inside the box
            return Extraction(None, "unclosed_box")
        return _from_prose(t)
    if unclosed > max(c[0] for c in lines + boxes):  # `Answer: 36 ... \\boxed{3` cut off: no answer
        return Extraction(None, "unclosed_box")
    if _disagree(_commitments(t, lines, boxes)):
        return Extraction(None, "conflict")
    pick = _pick(lines, boxes, style)
    if pick is None:
        return Extraction(None, "empty_answer")
    cut = refusal_end(t, pick[0])
    if cut >= 0:  # "Answer: 36. Actually, I cannot determine the answer.": only what follows counts
        answer, how = concluding_statement(t[cut:])
        return Extraction(answer, how if answer is not None else "refusal")
    return Extraction(pick[1], pick[2])


def extract(text: str, style: str = "dapo") -> Extraction:
    """The final answer of a response and how it was found, or why there is none (see the module docstring).

    Commitments are read in the last WINDOW characters of the final output (all of it when none are there): a
    commitment further back cannot make a wrong final answer right, so ignoring it pays a hedging policy
    nothing, and the scan stays as cheap as verl's math_dapo.
    """
    if style not in STYLES:
        raise ValueError(f"unknown answer style {style!r}; expected one of {STYLES}")
    t, why = answer_region(text)
    if t is None:
        return Extraction(None, why)
    base = t[-WINDOW:]
    lines, boxes, unclosed = _marked(base)
    if not lines and not boxes and unclosed < 0 and len(t) > WINDOW:
        found = _from_prose(t)
        if found.answer is not None or found.how == "conflict":
            return found
        base = t  # rare: a marked answer followed by more than WINDOW characters
        lines, boxes, unclosed = _marked(t)
    return _decide(base, lines, boxes, unclosed, style)


def extract_answer(text: str, style: str = "dapo") -> str | None:
    """The final answer text of a response, or None (see `extract`)."""
    return extract(text, style).answer


__all__ = ["Extraction", "STYLES", "TOO_BIG", "answer_region", "extract", "extract_answer", "read_prose_answer"]

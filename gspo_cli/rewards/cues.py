"""The words of the commitment rule (docs/verifier.md, R2-R3) in the languages Qwen3 answers in. Pure data + matchers.

The rule is one rule in every language; this module is its vocabulary: how each language spells a negation, a
hedge, an alternative, a counterfactual condition, a format example, an attribution, a relation (bound or
estimate), a retraction and a question. Words of space-separated languages are matched as whole tokens
(phrases as token sequences); Chinese, Japanese and Korean cues as substrings (those scripts do not separate
words), and only when the text is not ASCII.

Matching costs one tokenisation of a short text (a sentence around one value) and set look-ups; nothing here
scans a whole response.
"""

from __future__ import annotations

import re

NEG, HEDGE, ALT, ALT_NEAR, COND, IF, EXAMPLE, ATTR, RETRACT = (
    "neg", "hedge", "alt", "alt_near", "cond", "if", "example", "attr", "retract")

# Space-separated languages: class -> phrases (lower case, tokens separated by spaces).
_PHRASES: dict[str, tuple[str, ...]] = {
    NEG: (
        "not", "never", "isn't", "wasn't", "aren't", "cannot be",  # en
        "n'est pas", "pas", "n'est", "ne", "jamais",  # fr
        "nicht", "kein", "keine",  # de
        "no es", "no son", "no sea", "nunca",  # es
        "não", "nao",  # pt
        "non è", "non",  # it
        "не", "нет", "неверно",  # ru
    ),
    HEDGE: (
        "might", "may", "maybe", "perhaps", "possibly", "probably", "likely", "could", "guess", "presumably",
        "conceivably", "not sure", "unsure", "uncertain", "i suspect", "best guess", "seems", "looks like",
        "peut-être", "peut être", "pourrait", "probablement", "possiblement", "sans doute",  # fr
        "vielleicht", "könnte", "wahrscheinlich", "möglicherweise", "eventuell", "vermutlich",  # de
        "quizás", "quizá", "tal vez", "podría", "probablemente", "posiblemente", "a lo mejor",  # es
        "talvez", "poderia", "provavelmente", "possivelmente",  # pt
        "forse", "potrebbe", "probabilmente",  # it
        "возможно", "может", "вероятно", "наверное", "кажется", "видимо",  # ru
    ),
    ALT: (
        "instead", "alternatively", "also be", "could also", "might also", "may also", "another possible",
        "another possibility", "other possible", "second candidate", "backup",
        "aussi", "ou bien", "à la place",  # fr
        "stattdessen", "auch",  # de
        "también", "o bien", "en cambio",  # es
        "também", "ou então",  # pt
        "anche",  # it
        "также", "тоже", "вместо",  # ru
    ),
    ALT_NEAR: ("or", "ou", "oder", "или", "либо", "oppure"),  # an alternative only right before the value
    COND: (  # counterfactual: the value belongs to another case than the problem's
        "would", "were", "had we", "wäre", "würde", "wären", "serait", "aurait", "seraient", "sería", "sería", "fuera",
        "seria", "sarebbe", "бы",
    ),
    IF: ("if", "unless", "assuming", "suppose", "supposing", "wenn", "falls", "si", "если"),
    EXAMPLE: (
        "e.g.", "eg", "for example", "for instance", "such as", "in the form", "of the form", "format", "formatted",
        "template", "should look like", "should read", "last line", "final line",
        "answer line", "like this", "placeholder",
        "par exemple", "forme", "zum beispiel", "z.b.", "beispiel", "por ejemplo", "formato", "por exemplo",
        "ad esempio", "например", "формат",
    ),
    ATTR: (
        "according to", "says", "said", "claims", "claimed", "claim", "believes", "thinks", "thought", "suggests",
        "suggested", "told", "reportedly", "allegedly", "supposedly", "answer key", "textbook", "the book",
        "solution manual", "some sources", "others say", "my friend", "friend",
        "selon", "d'après", "dit", "corrigé",  # fr
        "laut", "sagt", "behauptet", "lösungsheft",  # de
        "según", "dice", "afirma",  # es
        "diz",  # pt
        "secondo",  # it
        "по словам", "согласно", "говорит", "утверждает",  # ru
    ),
    RETRACT: (
        "that is wrong", "that's wrong", "this is wrong", "it is wrong", "that was wrong", "this was wrong",
        "that is incorrect", "that's incorrect", "this is incorrect", "that is not right", "that's not right",
        "this is not right", "that is not correct", "this is not correct", "that can't be right",
        "that cannot be right", "scratch that", "disregard that", "disregard this", "disregard the above",
        "ignore that", "ignore the above", "i made a mistake", "i made an error", "i made a mistake above",
        "i was wrong", "my mistake", "i retract", "i withdraw", "withdraw this answer", "disregard my answer",
        "ignore my answer", "this count is off", "the above is wrong", "my answer is wrong",
        "c'est faux", "est faux", "c'est incorrect", "je me suis trompé",  # fr
        "ist falsch", "das stimmt nicht", "habe mich geirrt",  # de
        "es incorrecto", "está mal", "me equivoqué", "es falso",  # es
        "está errado", "é incorreto", "errei",  # pt
        "è sbagliato", "è errato", "ho sbagliato",  # it
        "неверно", "неправильно", "ошибся", "это ошибка",  # ru
    ),
}
# Chinese, Japanese, Korean: substrings.
_CJK: dict[str, tuple[str, ...]] = {
    NEG: ("不是", "并非", "並非", "不为", "不會是", "不会是", "ではない", "ではありません", "じゃない", "아니", "않"),
    HEDGE: ("可能", "也许", "也許", "大概", "或许", "或許", "估计", "不确定", "かもしれ", "たぶん", "多分", "おそらく",
            "恐らく", "だろう", "でしょう", "아마", "수도 있", "것 같", "듯"),
    ALT: ("也可能", "还可能", "または", "あるいは", "もしくは", "또는", "아니면"),
    ALT_NEAR: ("或者", "或是", "或"),
    COND: ("假如", "要是", "もし", "만약", "만일"),
    IF: ("如果", "若是", "假设"),
    EXAMPLE: ("例如", "比如", "格式", "形式", "例えば", "形式", "예를 들어", "형식", "예시"),
    ATTR: ("据说", "據說", "听说", "有人说", "某人", "によると", "によれば", "라고 한다", "에 따르면"),
    RETRACT: ("不对", "不對", "错了", "錯了", "是错的", "不正确", "搞错", "間違い", "違います", "違う", "틀렸", "틀린",
              "잘못"),
}
# "according to" + one of these is the response's own work, not someone else's.
_ARTICLES = frozenset("the this that these le la les el los las die der das a an".split())
_OWN = frozenset("my our above case analysis calculation calculations computation work formula count "
                 "counting derivation reasoning result results steps nos mes notre mon le calcul unsere meinen "
                 "meiner mis nuestro nuestros cálculo meus nossos наши моим расчётам".split())
_OWN_CJK = ("分析", "计算", "計算", "上面", "以上", "上述")
_FIRST_PERSON = frozenset("i we i've we've je nous ich wir yo nosotros eu nós io noi я мы".split())

_TOKEN = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*\.?|\?")
# The same tokens in an ASCII text, where `[^\W_]` is `[a-z0-9]` once lower-cased: a plain set is cheaper to test.
_TOKEN_ASCII = re.compile(r"[a-z0-9]+(?:['.-][a-z0-9]+)*\.?|\?")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (`isn't`, `e.g.`, `peut-être` stay whole)."""
    low = text.lower()
    if "’" in low:
        low = low.replace("’", "'")
    toks = (_TOKEN_ASCII if low.isascii() else _TOKEN).findall(low)
    if "." in low:
        toks = [t.rstrip(".") if len(t) > 1 and t.count(".") == 1 else t for t in toks]
    return toks


def _index(phrases: dict[str, tuple[str, ...]]) -> dict[str, list[tuple[tuple[str, ...], str]]]:
    by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for cls, ps in phrases.items():
        for p in ps:
            toks = tuple(p.split())
            by_first.setdefault(toks[0], []).append((toks, cls))
    return by_first


_BY_FIRST = _index(_PHRASES)


def classes(text: str, toks: list[str] | None = None) -> set[str]:
    """The cue classes present in text (a sentence or part of one)."""
    toks = tokens(text) if toks is None else toks
    found: set[str] = set()
    for i, t in enumerate(toks):
        for phrase, cls in _BY_FIRST.get(t, ()):
            if tuple(toks[i:i + len(phrase)]) == phrase:
                found.add(cls)
    if ATTR in found:
        found.discard(ATTR) if _own_source(toks) else None
    if not text.isascii():
        for cls, subs in _CJK.items():
            if any(s in text for s in subs):
                found.add(cls)
        if ATTR in found and any(s in text for s in _OWN_CJK) and not any(s in text for s in _CJK[ATTR]):
            found.discard(ATTR)
    return found


def _own_source(toks: list[str]) -> bool:
    """An attribution cue that names the response's own work or its writer ("according to my count", "I said")."""
    for i, t in enumerate(toks):
        if t in ("according", "selon", "d'après", "laut", "según", "segundo", "secondo", "согласно"):
            nxt = [w for w in toks[i + 1:i + 5] if w not in _ARTICLES]
            return bool(nxt) and (nxt[0] in _OWN or (nxt[0] == "to" and len(nxt) > 1 and nxt[1] in _OWN))
        if t in ("says", "said", "claim", "claims", "claimed", "thinks", "thought", "believes", "suggests", "suggested",
                 "dit", "sagt", "dice", "diz", "говорит"):
            return i > 0 and toks[i - 1] in _FIRST_PERSON
    return False


# --- relations: bounds, estimates, ranges (R2d). Read right before the value or right after it.
GE, GT, LE, LT, NE, APPROX, RANGE = ">=", ">", "<=", "<", "!=", "~", "range"
_REL_BEFORE: dict[str, tuple[str, ...]] = {
    GE: ("at least", "no less than", "not less than", "no fewer than", "not fewer than", "minimum of", "a minimum of",
         "au moins", "au minimum", "pas moins de", "mindestens", "wenigstens", "al menos", "por lo menos",
         "como mínimo", "pelo menos", "almeno", "не менее", "по крайней мере", "как минимум", "не меньше"),
    GT: ("more than", "greater than", "larger than", "bigger than", "exceeds", "above", "over", "plus de",
         "plus que", "supérieur à", "mehr als", "größer als", "más de", "mayor que", "mais de", "maior que",
         "più di", "maggiore di", "больше", "более"),
    LE: ("at most", "no more than", "not more than", "no greater than", "not greater than", "up to",
         "maximum of", "a maximum of", "au plus", "au maximum", "höchstens", "a lo sumo", "como máximo",
         "no más de", "no mas de", "no máximo", "al massimo", "не более", "не больше", "самое большее"),
    LT: ("less than", "fewer than", "smaller than", "below", "under", "moins de", "moins que", "inférieur à",
         "weniger als", "kleiner als", "menos de", "menor que", "menos que", "meno di", "minore di", "меньше",
         "менее"),
    NE: ("not equal to", "not equal", "different from", "other than", "différent de", "ungleich", "distinto de",
         "diferente de", "diverso da", "не равен", "не равно"),
    APPROX: ("about", "approximately", "approx", "roughly", "around", "nearly", "almost", "close to", "circa",
             "ca", "some", "environ", "à peu près", "approximativement", "ungefähr", "etwa", "rund",
             "aproximadamente", "alrededor de", "cerca de", "approssimativamente", "примерно", "около",
             "приблизительно", "почти"),
    RANGE: ("between", "from", "entre", "zwischen", "tra", "fra", "между", "от"),
}
_REL_AFTER: dict[str, tuple[str, ...]] = {
    GE: ("or more", "or greater", "or above", "or higher", "and up", "and above", "at least", "ou plus",
         "oder mehr", "o más", "ou mais", "o più", "или больше", "и более"),
    LE: ("or less", "or fewer", "or below", "or lower", "at most", "ou moins", "oder weniger", "o menos",
         "ou menos", "o meno", "или меньше", "и менее"),
    APPROX: ("approximately", "approx", "roughly", "or so", "ish", "environ", "ungefähr", "etwa",
             "aproximadamente", "примерно"),
    RANGE: ("to", "and", "à", "bis", "a", "до"),  # `between 33 and 35`, `33 to 35`: only with a value after them
}
_Table = tuple[tuple[str, tuple[str, ...]], ...]
_REL_CJK_BEFORE: _Table = ((GE, ("至少", "不少于", "不低于", "少なくとも", "적어도", "최소")),
                   (GT, ("大于", "多于", "超过", "超過")),
                   (LE, ("至多", "最多", "不超过", "不超過", "不多于", "不大于", "多くとも", "최대")),
                   (LT, ("小于", "少于", "不到", "未満")),
                   (NE, ("不等于", "不等於")),
                   (APPROX, ("约为", "約為", "大约", "大約", "约", "約", "およそ", "대략", "약 ", "近")))
_REL_CJK_AFTER: _Table = ((GE, ("以上", "이상")), (LE, ("以下", "以内", "이하", "이내")),
                  (APPROX, ("左右", "上下", "くらい", "ぐらい", "程度", "ほど", "前後", "정도", "쯤")))
_SYM_BEFORE: _Table = ((GE, ("\\geqslant", "\\geq", "\\ge", "≥", ">=", "⩾")), (LE, ("\\leqslant", "\\leq", "\\le", "≤", "<=",
               "⩽")), (NE, ("\\neq", "\\ne", "≠", "!=")), (APPROX, ("\\approx", "≈", "\\sim", "\\simeq", "≃", "~")),
               (GT, ("\\gt", ">")), (LT, ("\\lt", "<")))
_SYM_AFTER: _Table = ((RANGE, ("\\pm", "±", "–", "—", "\\text{–}")),)
_INDEX_BEFORE = _index(_REL_BEFORE)
_INDEX_AFTER = _index(_REL_AFTER)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]{0,40}>")
_LATEX_SPACE = re.compile(r"\\[,;:! ]|\\quad|\\qquad|[{}$\s*_(]")


def relation(before: str, after: str, toks: list[str] | None = None) -> str | None:
    """The relation a value is stated with, from the text right before it and right after it, or None.
    `toks`: the tokens of `before`, when the caller has them."""
    b = _HTML_TAG.sub("", before[-80:]).rstrip() if "<" in before[-80:] else before.rstrip()
    after = _HTML_TAG.sub("", after[:80]) if "<" in after[:80] else after
    tail = _LATEX_SPACE.sub("", b[-16:])
    for op, syms in _SYM_BEFORE:
        for s in syms:
            if tail.endswith(s):
                if s == "~" and not _tilde_is_approx(b):
                    continue
                return op
    if toks is None or "<" in before[-80:]:
        toks = tokens(b[-60:])
    last4 = toks[-4:]
    for n in (4, 3, 2, 1):  # the last tokens before the value
        last = tuple(last4[-n:])
        if len(last) == n and last[0] in _INDEX_BEFORE:
            for phrase, op in _INDEX_BEFORE.get(last[0], ()):
                if phrase == last:
                    return op
    a = after.lstrip(" \t$}*_")
    for op, syms in _SYM_AFTER:
        for s in syms:
            if a.startswith(s) and not (s[0] == "\\" and a[len(s):len(s) + 1].isalpha()) and (
                    s in ("\\pm", "±") or _VALUE_AFTER.match(a, len(s))):  # `\pm`, not `\pmod`; a dash before a value
                return op
    if a[:1] == "-" and a[1:2].isdigit():  # `33-35`
        return RANGE
    atoks = tokens(a[:40]) if a[:1].isalpha() or a[:1] == "(" else []
    for n in (3, 2, 1):
        first = tuple(atoks[:n])
        if len(first) == n:
            for phrase, op in _INDEX_AFTER.get(first[0], ()):
                if phrase == first and (op != RANGE or _value_follows(a, phrase)):
                    return op
    if a[:1] == "(" and tokens(a[:20])[:1] in (["approximately"], ["approx"], ["about"], ["roughly"]):
        return APPROX
    if not (before.isascii() and after.isascii()):
        for op, subs in _REL_CJK_BEFORE:
            if any(b.endswith(s) or b.endswith(s + " ") or b[-len(s) - 2:].find(s) >= 0 for s in subs):
                return op
        for op, subs in _REL_CJK_AFTER:
            if any(a.startswith(s) for s in subs):
                return op
    return None


def _tilde_is_approx(before: str) -> bool:
    """`~34` after a space or at the start is "about 34"; `is~34` / `}~34` is a LaTeX non-breaking space."""
    i = before.rstrip().rfind("~")
    return i == 0 or (i > 0 and before[i - 1] in " \t\n(:")


_VALUE_AFTER = re.compile(r"\s*[$\\(]*\s*[-−+]?\d")


def _value_follows(after: str, phrase: tuple[str, ...]) -> bool:
    """`33 to 35`, `33 and 35`: the range word is followed by another value."""
    low = after.lower()
    i = low.find(phrase[-1])
    return i >= 0 and bool(_VALUE_AFTER.match(after, i + len(phrase[-1])))


# Triggers: for every cue phrase, its words that are not common function words, so that a sentence holding no
# trigger holds no cue (the common case is then decided with one set test). Relation words only count right
# before or right after the value.
_COMMON = frozenset("the a an i it it's that that's this is was are be my our we to of and la le el die der das de "
                    "il lo è é es est ist c'est me above made for in as en por par o zum ad son sea answer final last".split())
TRIGGERS = frozenset(tok for ps in _PHRASES.values() for p in ps for tok in p.split() if tok not in _COMMON) | {
    "according", "selon", "laut", "según", "secondo", "согласно"}
REL_BEFORE_WORDS = frozenset(tok for ps in _REL_BEFORE.values() for p in ps for tok in p.split())
REL_AFTER_FIRST = frozenset(p.split()[0] for ps in _REL_AFTER.values() for p in ps)
assert all(any(tok in TRIGGERS for tok in p.split()) for ps in _PHRASES.values() for p in ps)

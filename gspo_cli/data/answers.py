"""Is a ground truth an answer? DAPO-Math-17k and AIME answers are integers: this reads one, or says it is not.

Pure code. A plain integer string (the common case) is handled by a regex; anything else goes through the
reward verifier's normalisation (`gspo_cli.rewards.normalize`) when it is installed, so `033`, `$33$` and
`\\boxed{33}` count as 33 exactly as the reward will read them.
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"\s*([+-]?\d{1,40})\s*")


def _verifier_normalize(text: str) -> str | None:
    from gspo_cli.rewards.normalize import normalize

    try:
        return normalize(text)
    except Exception:  # the verifier's problem, not a reason to crash data preparation
        return None


def integer_answer(value: Any) -> str | None:
    """The canonical integer string of a ground truth (`"033"` -> `"33"`), or None when it is not an integer."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else None
    if not isinstance(value, str):
        return None
    m = _INT.fullmatch(value)
    if m:
        return str(int(m.group(1)))
    if not value.strip() or not any(ch.isdigit() for ch in value):
        # a ground truth names its integer in digits: the verifier reads number words in responses ("seven"),
        # but a data set whose answer is a word is more likely broken than worded, so the row is rejected
        return None
    norm = _verifier_normalize(value)
    if norm is not None:
        m = _INT.fullmatch(norm)
        if m:
            return str(int(m.group(1)))
    return None


def reject_reason(value: Any) -> str:
    """Why `value` is not an answer (for the manifest's rejected-rows table)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "missing ground truth"
    return "ground truth is not an integer"

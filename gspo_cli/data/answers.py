"""Is a ground truth an answer? DAPO-Math-17k and AIME answers are integers: this reads one, or says it is not.
AMC-2023's are numbers stored as floats (`27.0`): `numeric_answer` reads those as the integer they are, and an exact
short decimal as itself.

Pure code. A plain integer string (the common case) is handled by a regex; anything else goes through the
reward verifier's normalisation (`gspo_cli.rewards.normalize`) when it is installed, so `033`, `$33$` and
`\\boxed{33}` count as 33 exactly as the reward will read them.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

_INT = re.compile(r"\s*([+-]?\d{1,40})\s*")
# an exact decimal worth writing as a ground truth: a float that went through a parquet column (0.5, 6.25); more
# digits are a rounded fraction (0.3333...), which no response can match exactly
_DECIMAL = re.compile(r"[+-]?\d{1,20}\.\d{1,6}")


def _verifier_normalize(text: str) -> str | None:
    from gspo_cli.rewards.normalize import normalize

    try:
        return normalize(text)
    except (ValueError, ArithmeticError, RecursionError):  # no value to read (int's 4300-digit limit, 1/0, ...)
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


def numeric_answer(value: Any) -> str | None:
    """The canonical string of a numeric ground truth: an integer (`27.0` -> `27`, `-1.0` -> `-1`) or an exact
    decimal of at most 6 places (`0.50` -> `0.5`); None for anything else (a fraction, an expression, 1/3 rounded)."""
    whole = integer_answer(value)
    if whole is not None or value is None or isinstance(value, bool):
        return whole
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = repr(value)  # the shortest text that reads back as this float
    if not isinstance(value, str) or not _DECIMAL.fullmatch(value.strip()):
        return None
    exact = Decimal(value.strip())
    if exact == exact.to_integral_value():
        return str(int(exact))
    return format(exact.normalize(), "f")


def reject_reason(value: Any) -> str:
    """Why `value` is not an answer (for the manifest's rejected-rows table)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "missing ground truth"
    return "ground truth is not an integer"


def numeric_reject_reason(value: Any) -> str:
    """Why `value` is not a numeric answer."""
    reason = reject_reason(value)
    return reason if reason == "missing ground truth" else "ground truth is not an exact number"

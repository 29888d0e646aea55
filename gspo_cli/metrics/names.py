"""Metric names both engines log (verl's), and how to find the validation-accuracy series among them."""

from __future__ import annotations

import re

REWARD = "critic/score/mean"
STEP_TIME = "timing_s/step"

# verl also logs std@N, best@N/mean, maj@N/mean ... under the same prefix; the curve is the mean over samples
# (a data_source may hold slashes: verl's own examples use `openai/gsm8k`, `lighteval/MATH`)
VAL_KEY = re.compile(r"^val-(?:core|aux)/(?P<source>.+)/(?P<metric>acc|reward|score)/(?P<stat>mean@\d+)$")


def val_keys(series) -> list[str]:
    """Validation accuracy series (`val-core/<source>/acc/mean@N` and friends) present in `series`, sorted."""
    return sorted(k for k in series if (m := VAL_KEY.match(k)) and m["metric"] == "acc" and series[k])

"""Pure-torch GSPO algorithm core (no I/O): GRPO advantages (`advantages.py`), loss aggregation
(`aggregation.py`), the open policy-loss registry (`losses.py`). Import the submodule you need.

Semantics follow verl 0.9.1's `core_algos` (checked against it in tests/algo). `losses.py` imports torch only
inside its functions, so the registry's names are readable without torch (the preset schema reads them).
"""

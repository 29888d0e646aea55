"""When a run saves and validates: every `freq` steps and on the last step, whatever the frequency (both engines).

verl 0.9.1's fit loop (verl/trainer/ppo/ray_trainer.py, and v1/trainer_base.py the same) saves when
`save_freq > 0 and (is_last_step or global_steps % save_freq == 0)` and validates on the same rule with
`test_freq`; `is_last_step = global_steps >= total_training_steps`. The native trainer asks `fires` here, so a
frequency above the run's length means "on the last step only", not "never": the messages say which steps.
"""

from __future__ import annotations

SHOWN = 4  # steps named before "..." in a description


def fires(step: int, total: int, freq: int) -> bool:
    """Whether step `step` (1-based) of a `total`-step run saves / validates with this frequency (-1: never)."""
    return freq > 0 and (step % freq == 0 or step >= total)


def steps(total: int, freq: int) -> list[int]:
    """Every step that fires, in order."""
    if freq <= 0 or total < 1:
        return []
    found = list(range(freq, total + 1, freq))
    return found if found and found[-1] == total else [*found, total]


def _preview(at: list[int]) -> str:
    if len(at) <= SHOWN:
        return ", ".join(str(s) for s in at[:-1]) + f" and {at[-1]}"
    return ", ".join(str(s) for s in at[:SHOWN - 1]) + f", ..., {at[-1]}"


def _when(total: int, freq: int) -> str:
    at = steps(total, freq)
    if not at:
        return "never"
    if at == [total]:
        return f"at step {total} only (the last step)"
    extra = "" if total % freq == 0 else " and on the last step"
    return f"every {freq} steps{extra} (steps {_preview(at)})"


def describe(total: int, save_freq: int, test_freq: int, val_before_train: bool = False) -> str:
    """One line: which steps save a checkpoint and which validate, in a `total`-step run."""
    saves, validates = _when(total, save_freq), _when(total, test_freq)
    if saves == validates:
        text = f"saves and validates {saves}" if saves != "never" else "never saves nor validates"
    else:
        text = "; ".join(f"never {verb}" if when == "never" else f"{verb} {when}"
                         for verb, when in (("saves", saves), ("validates", validates)))
    return text + ("; validates once before step 1" if val_before_train else "")

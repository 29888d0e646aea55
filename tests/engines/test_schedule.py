"""engines/schedule.py against verl 0.9.1's own fit-loop rule, read from the installed source (not restated)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gspo_cli.engines import schedule


def _verl_rule(step: int, total: int, freq: int) -> bool:
    """verl's condition, as its fit loop writes it (checked below to be there, word for word)."""
    is_last_step = step >= total
    return freq > 0 and (is_last_step or step % freq == 0)


def test_verl_fit_loop_states_the_rule_we_copy():
    import verl  # a hard import: a missing verl fails this check, never skips it

    src = (Path(verl.__file__).parent / "trainer" / "ppo" / "ray_trainer.py").read_text()
    assert "is_last_step = self.global_steps >= self.total_training_steps" in src
    for key in ("save_freq", "test_freq"):
        pattern = rf"self\.config\.trainer\.{key} > 0 and \(\s*is_last_step\s*or self\.global_steps % " \
                  rf"self\.config\.trainer\.{key} == 0"
        assert re.search(pattern, src), key


@pytest.mark.parametrize("total", [1, 3, 4, 7, 24])
@pytest.mark.parametrize("freq", [-1, 1, 2, 4, 8, 50])
def test_fires_is_verls_rule(total, freq):
    assert [s for s in range(1, total + 1) if schedule.fires(s, total, freq)] == \
        [s for s in range(1, total + 1) if _verl_rule(s, total, freq)] == schedule.steps(total, freq)


def test_descriptions_say_what_will_happen():
    assert schedule.describe(4, 4, 8) == "saves and validates at step 4 only (the last step)"
    assert schedule.describe(10, 4, -1) == "saves every 4 steps and on the last step (steps 4, 8 and 10); never validates"
    assert schedule.describe(24, 4, 8, True) == ("saves every 4 steps (steps 4, 8, 12, ..., 24); validates every 8 "
                                                 "steps (steps 8, 16 and 24); validates once before step 1")
    assert schedule.describe(5, -1, -1) == "never saves nor validates"


def test_a_frequency_above_the_run_length_is_accepted():
    from gspo_cli.config.presets import load_preset

    preset = load_preset("tiny-verl", ["trainer.total_training_steps=4"])
    assert (preset.trainer.test_freq, preset.trainer.save_freq) == (8, 4)
    control = pytest.raises(Exception, match="save_freq must be -1")
    with control:
        load_preset("tiny-verl", ["trainer.save_freq=0"])

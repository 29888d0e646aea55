"""Training learns: a short real run of the tiny preset raises the mean reward and the validation accuracy by a
margin, and the same run with the advantage sign flipped (the wiring bug every other test here would pass) does
not. Both are real CPU runs of the native trainer (~30 s each), not mocks; the flip is a subclass, as a bug in
`NativeTrainer.advantages` would be."""

from __future__ import annotations

import pytest
from native_helpers import write_arith

from gspo_cli.engines.native.trainer import NativeTrainer, train
from gspo_cli.jobs import events
from gspo_cli.metrics.jsonl import read_metrics

VAL = "val-core/arith/acc/mean@1"
# The tiny preset on an easier task, so 30 steps show learning: sums of 0..3 (16 problems), one response token
# (the answer: no stop to learn, no overlong penalty), 8 prompts x 8 responses, 2 mini-batches per step.
LEARN_SETS = ["data.train_batch_size=8", "rollout.n=8", "actor.ppo_mini_batch_size=4", "actor.lr=3e-3",
              "actor.lr_warmup_steps=1", "data.max_response_length=1", "algorithm.overlong_penalty.enable=false",
              "trainer.total_training_steps=30", "trainer.test_freq=10", "trainer.val_before_train=true",
              "trainer.save_freq=-1"]
MIN_REWARD_GAIN = 0.3  # mean score of the last 5 steps over the first 5 (score is +1 right, -1 wrong)
MIN_VAL_GAIN = 0.2  # validation accuracy at the end over step 0 (16 problems: 4 more right)


class SignFlipped(NativeTrainer):
    def advantages(self, scores, batch):
        return -super().advantages(scores, batch)


def check_learned(records: list[dict]) -> None:
    """AssertionError naming what did not improve, with the curves."""
    scores = [r["data"]["critic/score/mean"] for r in records if "critic/score/mean" in r["data"]]
    val = [(r["step"], r["data"][VAL]) for r in records if VAL in r["data"]]
    first, last = sum(scores[:5]) / 5, sum(scores[-5:]) / 5
    curves = (f"score by step {[round(s, 2) for s in scores]}; validation accuracy by step "
              f"{[(step, round(acc, 3)) for step, acc in val]}")
    assert last - first >= MIN_REWARD_GAIN, (
        f"mean reward did not rise: first 5 steps {first:.2f}, last 5 {last:.2f} (need +{MIN_REWARD_GAIN}); {curves}")
    assert val[-1][1] - val[0][1] >= MIN_VAL_GAIN, (
        f"validation accuracy did not rise: {val[0][1]:.3f} at step 0, {val[-1][1]:.3f} at step {val[-1][0]} "
        f"(need +{MIN_VAL_GAIN}); {curves}")


def _train(workspace, name: str, trainer_class: type[NativeTrainer]) -> list[dict]:
    from gspo_cli.config.presets import load_preset

    data = workspace["data"] / name
    write_arith(data, train_size=64, val_size=16, max_operand=3)
    preset = load_preset("tiny", [f"paths.data_dir={data}", f"paths.runs_dir={workspace['runs']}", *LEARN_SETS])
    previous = events.set_sink(lambda event: None)
    try:
        assert train(preset, workspace["runs"] / name, trainer_class) == 0
    finally:
        events.set_sink(previous)
    return read_metrics(workspace["runs"] / name / "metrics.jsonl")


@pytest.mark.slow
def test_a_short_tiny_run_raises_reward_and_validation_accuracy(workspace):
    records = _train(workspace, "learn", NativeTrainer)
    check_learned(records)
    assert any(r["data"].get("actor/pg_clipfrac", 0) > 0 for r in records)  # 2 mini-batches: the clip binds


@pytest.mark.slow
def test_the_same_run_with_the_advantage_sign_flipped_fails_the_learning_check(workspace):
    records = _train(workspace, "flipped", SignFlipped)
    with pytest.raises(AssertionError, match="did not rise") as failed:
        check_learned(records)
    print(f"sign-flipped run: {failed.value}")

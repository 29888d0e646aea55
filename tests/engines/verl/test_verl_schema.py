"""The verl schema check: Hydra compose of verl's own config in struct mode, then verl's validators. A typo'd
key that only verl knows is wrong is caught before any Ray call, naming the override and the preset key."""

from __future__ import annotations

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl import schema_check
from gspo_cli.engines.verl.compile import compile_preset
from gspo_cli.errors import ConfigError

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow

PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")
UNREACHABLE = "http://127.0.0.1:9"  # nothing listens: reaching Ray would fail with "cannot reach Ray"


def check(sets, name="qwen3-32b-4x16", **kw):
    loaded = presets.load(name, sets)
    return schema_check.check(compile_preset(loaded.preset, **PATHS), loaded, **kw)


def test_typo_in_set_is_caught_before_any_ray_call(gspo):
    proc = gspo("train", "--preset", "qwen3-32b", "--set",
                "overrides.verl=[actor_rollout_ref.actor.optim.lrr=2e-6]", "--address", UNREACHABLE)
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "rejected override `actor_rollout_ref.actor.optim.lrr=2e-6` (compose)" in err
    assert "Key 'lrr' is not in struct" in err
    assert "preset key overrides.verl[0] (--set overrides.verl=[actor_rollout_ref.actor.optim.lrr=2e-6])" in err
    assert "cannot reach Ray" not in err and "Submitted" not in err and "Traceback" not in err
    print(proc.stderr)


def test_typo_in_preset_file_names_file_and_line(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("extends: qwen3-32b-4x16\nname: mine\noverrides:\n  verl:\n    - trainer.log_val_generations=2\n"
                 "    - trainer.nnodess=4\n")
    with pytest.raises(ConfigError) as info:
        check([], name=str(f), full=False)
    msg = info.value.message
    assert "rejected override `trainer.nnodess=4` (compose)" in msg
    assert f"preset key overrides.verl[1] ({f}:6)" in msg


def test_wrong_type_is_caught_at_compose_time():
    with pytest.raises(ConfigError) as info:
        check(["overrides.verl=[actor_rollout_ref.actor.ppo_epochs=two]"], full=False)
    assert "rejected override `actor_rollout_ref.actor.ppo_epochs=two` (type)" in info.value.message
    assert "verl expects a number, got 'two'" in info.value.message
    with pytest.raises(ConfigError, match="verl expects a boolean, got 'maybe'"):
        check(["overrides.verl=[actor_rollout_ref.rollout.val_kwargs.do_sample=maybe]"], full=False)


def test_bad_value_is_caught_by_verls_own_validators():
    with pytest.raises(ConfigError) as info:
        check(["overrides.verl=[actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-meen]"], use_cache=False)
    msg = info.value.message
    assert "(validate)" in msg and "Invalid loss_agg_mode: seq-mean-token-meen" in msg
    assert "rejected override `actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-meen`" in msg


def test_verl_batch_rule_names_the_preset_key():
    # verl's own divisibility check (fixed micro-batches): 3 prompts x 2 samples over 64 devices.
    with pytest.raises(ConfigError) as info:
        check(["actor.use_dynamic_bsz=false", "actor.ppo_micro_batch_size_per_device=1", "data.train_batch_size=3",
               "actor.ppo_mini_batch_size=1", "rollout.n=2"], use_cache=False)
    assert "real_train_batch_size (6) must be divisible by minimal possible batch size (64)" in info.value.message


def test_verdict_cache_is_per_overrides(gspo_home):
    first = check([])
    assert first.validated and not first.cached
    again = check([])
    assert again.cached  # same overrides, same verl: verl's verdict is reused
    other = check(["actor.lr=2e-6"])
    assert not other.cached and schema_check.cached_verdicts() == 2


def test_warm_check_skips_compose_and_the_cold_path_still_rejects(gspo_home, monkeypatch):
    """A cached verdict covers both stages (it is written only after both passed): no Hydra compose when warm; a
    changed override is a new key, composed and rejected as before."""
    assert check([]).compose_s > 0
    composed = []
    real = schema_check.compose
    monkeypatch.setattr(schema_check, "compose", lambda overrides: composed.append(1) or real(overrides))
    warm = check([])
    assert warm.cached and warm.validated and composed == []
    with pytest.raises(ConfigError, match="rejected override `actor_rollout_ref.actor.optim.lrr=2e-6` .compose."):
        check(["overrides.verl=[actor_rollout_ref.actor.optim.lrr=2e-6]"])
    assert composed
    monkeypatch.setenv(schema_check.RECOMPOSE_VAR, "1")  # the old behaviour, for benchmarks/dry_run.py
    composed.clear()
    assert check([]).cached and composed


def test_verdict_cache_ignores_the_run_name(gspo_home):
    """Presets without trainer.experiment_name use the run name for it: a new run must still hit the cache."""
    from gspo_cli.engines.verl.launch import make_plan

    first = make_plan("qwen3-8b-1x16", run_name="run-a")
    second = make_plan("qwen3-8b-1x16", run_name="run-b")
    assert "trainer.experiment_name=run-b" in second.compiled.overrides
    assert first.schema.validated and not first.schema.cached
    assert second.schema.validated and second.schema.cached


def test_a_path_the_type_check_cannot_read_is_left_to_stage_2_and_nothing_else_is_swallowed(monkeypatch):
    """The type check skips only the paths omegaconf cannot walk (a key under a plain value, a list indexed by
    name); any other error is a bug and is raised, not skipped."""
    base = schema_check._base()
    cfg = schema_check.compose(["trainer.logger=[console]"])
    for key in ("actor_rollout_ref.actor.optim.lr.x", "trainer.logger.0", "trainer.logger.0.x", "trainer.logger.5"):
        assert schema_check._default_and_value(base, cfg, key) is None, key
    assert schema_check._default_and_value(base, cfg, "actor_rollout_ref.actor.clip_ratio_c") == (3.0, 3.0)  # control

    def broken(cfg, key):
        raise RuntimeError("a bug in the reader")

    monkeypatch.setattr(schema_check, "_raw_value", broken)
    with pytest.raises(RuntimeError, match="a bug in the reader"):
        schema_check._default_and_value(base, cfg, "actor_rollout_ref.actor.clip_ratio_c")

"""`algorithm.rollout_correction` (config/rollout_correction.py -> engines/verl/compile.py -> traps.py): verl's own
parsers, config classes, loss and trainer code are the oracle for what is accepted, what is compiled and what verl
does with it (which trainer and mode keep the GSPO loss, which replace it, which ignore the correction)."""

from __future__ import annotations

import inspect

import pytest
import torch
import verl.trainer.ppo.rollout_corr_helper as rch  # hard: a missing verl fails, never skips

from gspo_cli.config.presets import load_preset
from gspo_cli.engines.verl import traps
from gspo_cli.engines.verl.compile import compile_preset
from gspo_cli.errors import ConfigError

RC = "algorithm.rollout_correction"
PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")
ON = ["rollout.calculate_log_probs=true"]


def _preset(*sets, name="qwen3-0.6b-1x1"):
    return load_preset(name, [*ON, *sets])


def _rc(preset):
    return [c for c in traps.checks(preset) if c.name == "rollout correction"]


# ------------------------------------------------------------------ the schema against verl's parsers


def test_rs_options_are_verls():
    from gspo_cli.config.rollout_correction import RS_OPTIONS, TOKEN_RS_OPTIONS

    assert set(RS_OPTIONS) == rch.SUPPORTED_ROLLOUT_RS_OPTIONS
    assert set(TOKEN_RS_OPTIONS) == rch.TOKEN_LEVEL_ROLLOUT_RS_OPTIONS


def _verl_accepts(fn, *args) -> bool:
    try:
        fn(*args)
    except (ValueError, TypeError):
        return False
    return True


def _we_accept(sets) -> bool:
    try:
        _preset(*sets)
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("spec", ["2.0", "5", "0.5_5.0", "0.999_1.001", "0", "-1", "5_0.5", "a_b", "abc", "0_2"])
def test_is_threshold_accepted_exactly_when_verl_parses_it(spec):
    # quoted, as a preset must write a "lower_upper" string: YAML 1.1 reads 0.5_5 unquoted as the number 0.55
    assert _we_accept([f"{RC}.rollout_is_threshold='{spec}'"]) == _verl_accepts(rch._parse_rollout_is_threshold,
                                                                                spec), spec


@pytest.mark.parametrize(("options", "spec"), [
    ("seq_mean_k1", "0.999_1.001"), ("seq_mean_k1", "1.001"), ("seq_mean_k3", "0.01"), ("seq_mean_k3", "0.5_2"),
    ("token_k1", "0.5_2.0"), ("seq_max_k2", "0"), ("seq_mean_k1,seq_max_k3", "0.5_2.0,0.01"),
    ("seq_mean_k1,seq_max_k3", "0.5_2.0"), ("seq_mean_k1,seq_max_k3", "1,2,3"), ("seq_sum_k1", "2_1"),
])
def test_rs_threshold_accepted_exactly_when_verl_parses_it(options, spec):
    ours = _we_accept([f"{RC}.rollout_rs='{options}'", f"{RC}.rollout_rs_threshold='{spec}'"])
    assert ours == _verl_accepts(rch._parse_rollout_rs_thresholds, options.split(","), spec), (options, spec)


def test_unknown_rs_option_and_missing_threshold_are_refused_naming_the_key():
    with pytest.raises(ConfigError, match="seq_mean_k9"):
        _preset(f"{RC}.rollout_rs=seq_mean_k9", f"{RC}.rollout_rs_threshold=0.5")
    with pytest.raises(ConfigError, match="rollout_rs_threshold"):
        _preset(f"{RC}.rollout_rs=seq_mean_k3")


def test_the_native_engine_refuses_the_section():
    with pytest.raises(ConfigError, match="rollout_correction"):
        load_preset("tiny", [f"{RC}.rollout_is=sequence"])


# ------------------------------------------------------------------ compile: verl's config is the oracle


@pytest.mark.slow
def test_compiled_section_loads_as_verls_geo_rs_seq_tis_preset():
    """The preset section compiles to keys verl's Hydra config composes and that build verl's own
    RolloutCorrectionConfig, equal to verl's named preset for the same choice (decoupled Geo-RS + Seq-TIS)."""
    from verl.trainer.config.algorithm import RolloutCorrectionConfig
    from verl.utils.config import omega_conf_to_dataclass

    from gspo_cli.engines.verl import schema_check

    preset = _preset(f"{RC}.rollout_rs=seq_mean_k1", f"{RC}.rollout_rs_threshold=0.999_1.001")
    compiled = compile_preset(preset, **PATHS)
    assert f"{RC}.rollout_is=sequence" in compiled.overrides
    assert compiled.origins[f"{RC}.rollout_rs_threshold"] == f"{RC}.rollout_rs_threshold"
    cfg = schema_check.compose(compiled.overrides)
    got = omega_conf_to_dataclass(cfg.algorithm.rollout_correction, RolloutCorrectionConfig)
    assert got == RolloutCorrectionConfig.decoupled_geo_rs_seq_tis(), got
    # verl's own parsers take the compiled values
    rch._parse_rollout_is_threshold(got.rollout_is_threshold)
    rch._parse_rollout_rs_thresholds(got.rollout_rs.split(","), got.rollout_rs_threshold)
    # without the section nothing is compiled: verl keeps its yaml defaults (metrics only)
    plain = compile_preset(_preset(), **PATHS)
    assert not [o for o in plain.overrides if RC in o]
    base = schema_check.compose(plain.overrides).algorithm.rollout_correction
    assert {k: base[k] for k in traps.RC_YAML_DEFAULTS} == traps.RC_YAML_DEFAULTS


# ------------------------------------------------------------------ what verl does with it


def test_verl_gspo_loss_reads_the_is_weights():
    """Decoupled mode keeps GSPO and the weights reach it: verl's compute_policy_loss_gspo scales its per-token
    losses by rollout_is_weights (zero weights: zero loss)."""
    from verl.trainer.ppo.core_algos import get_policy_loss_fn
    from verl.workers.config import ActorConfig

    torch.manual_seed(0)
    lp, old = torch.randn(4, 6) * 0.01 - 1, torch.randn(4, 6) * 0.01 - 1
    adv, mask = torch.randn(4, 1).expand(4, 6), torch.ones(4, 6)
    cfg = ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1, clip_ratio=0.2,
                      clip_ratio_low=3e-4, clip_ratio_high=4e-4)
    gspo = get_policy_loss_fn("gspo")
    kw = dict(old_log_prob=old, log_prob=lp, advantages=adv, response_mask=mask, loss_agg_mode="seq-mean-token-mean",
              config=cfg)
    plain, _ = gspo(**kw)
    ones, _ = gspo(**kw, rollout_is_weights=torch.ones(4, 6))
    zeros, _ = gspo(**kw, rollout_is_weights=torch.zeros(4, 6))
    assert torch.allclose(plain, ones) and float(zeros) == 0.0 and float(plain) != 0.0


def test_legacy_bypass_replaces_the_loss_and_v1_bypass_skips_the_correction():
    """The reading traps.rollout_correction_checks relies on, against verl 0.9.1 itself: apply_bypass_mode (called by
    the legacy trainer's fit) rewrites policy_loss.loss_mode; the V1 trainer never calls it, copies the rollout
    log-probs in _compute_old_log_prob and gates the correction on `not bypass_recomputing_logprobs`."""
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo import ray_trainer
    from verl.trainer.ppo.v1 import trainer_base

    batch = DataProto.from_dict({"rollout_log_probs": torch.zeros(2, 3), "old_log_probs": torch.ones(2, 3)})
    policy_loss = OmegaConf.create({"loss_mode": "gspo"})
    rch.apply_bypass_mode(batch, OmegaConf.create({"bypass_mode": True, "loss_type": "ppo_clip"}), policy_loss)
    assert policy_loss.loss_mode == "bypass_mode" and torch.equal(batch.batch["old_log_probs"], torch.zeros(2, 3))
    assert "apply_bypass_mode(" in inspect.getsource(ray_trainer.RayPPOTrainer.fit)
    v1 = inspect.getsource(trainer_base)
    assert "apply_bypass_mode" not in v1
    old_log_prob = inspect.getsource(trainer_base.PPOTrainer._compute_old_log_prob)
    assert 'data["old_log_probs"] = data.pop("rollout_log_probs")' in old_log_prob
    advantage = inspect.getsource(trainer_base.PPOTrainer._compute_advantage)
    assert "not bypass_recomputing_logprobs" in advantage and "compute_rollout_correction_and_add_to_batch" in advantage


# ------------------------------------------------------------------ preflight verdicts


def test_sequence_is_with_sequence_rejection_is_ok_and_describes_what_runs():
    (check,) = _rc(_preset(f"{RC}.rollout_rs=seq_mean_k1", f"{RC}.rollout_rs_threshold=0.999_1.001"))
    assert check.status == "ok"
    assert "gspo loss multiplies its per-token losses" in check.message and "summed token log-ratios" in check.message


def test_without_rollout_log_probs_the_correction_is_refused():
    preset = load_preset("qwen3-0.6b-1x1", [f"{RC}.rollout_is=sequence", "rollout.calculate_log_probs=false"])
    (check,) = _rc(preset)
    assert check.status == "error" and "silently skipped" in check.message
    assert check.fix == "set rollout.calculate_log_probs: true"


@pytest.mark.parametrize(("sets", "words"), [
    ([f"{RC}.rollout_is=token"], "token-level IS weights"),
    ([f"{RC}.rollout_is=null", f"{RC}.rollout_rs=token_k1", f"{RC}.rollout_rs_threshold=0.5_2.0"],
     "token-level rejection"),
])
def test_token_level_correction_on_gspo_is_warned(sets, words):
    (check,) = _rc(_preset(*sets))
    assert check.status == "warn" and words in check.message
    # control: the same on the token-level vanilla loss is fine
    vanilla = _preset(*sets, "algorithm.loss_mode=vanilla", "algorithm.clip_ratio_low=0.2",
                      "algorithm.clip_ratio_high=0.28")
    assert [c.status for c in _rc(vanilla)] == ["ok"]


def test_v1_bypass_keeps_gspo_but_warns_that_is_and_rs_are_ignored():
    (check,) = _rc(_preset(f"{RC}.bypass_mode=true"))  # the section's rollout_is: sequence is ignored
    assert check.status == "warn" and "[gspo-bypass-mode]" in check.message
    assert "keeps the gspo loss" in check.message and "rollout_is is silently ignored" in check.message
    (plain,) = _rc(_preset(f"{RC}.bypass_mode=true", f"{RC}.rollout_is=null"))
    assert plain.status == "info" and "keeps the gspo loss" in plain.message


@pytest.mark.parametrize("sets", [
    [f"{RC}.bypass_mode=true", f"{RC}.rollout_is=null", "overrides.verl=[trainer.use_v1=false]"],
    ["overrides.verl=[algorithm.rollout_correction.bypass_mode=true,trainer.use_v1=false]"],
])
def test_legacy_trainer_bypass_replacing_gspo_is_refused(sets):
    (check,) = _rc(_preset(*sets))
    assert check.status == "error" and "[gspo-bypass-mode]" in check.message and "apply_bypass_mode" in check.message


def test_no_section_no_check():
    assert _rc(_preset()) == []


# ------------------------------------------------------------------ what the user sees


@pytest.mark.slow
def test_dry_run_and_plan_show_the_setting_and_the_risk(gspo, gspo_home):
    """`gspo train --dry-run` shows preflight's verdict (the compiled keys with --verbose); `gspo plan` prints the setting, or a
    risk line when preflight warns."""
    sets = ["--set", "rollout.calculate_log_probs=true", "--set", f"{RC}.rollout_rs=seq_mean_k1",
            "--set", f"{RC}.rollout_rs_threshold=0.999_1.001"]
    dry = gspo("train", "--preset", "qwen3-0.6b-1x1", "--dry-run", "--verbose", *sets, env={"COLUMNS": "300"})
    text = " ".join((dry.stdout + dry.stderr).split())
    assert f"{RC}.rollout_is=sequence" in text and f"{RC}.rollout_rs=seq_mean_k1" in text, text[-3000:]
    assert "rollout correction" in text and "decoupled, rollout_is=sequence (threshold 2.0), rollout_rs=seq_mean_k1" in text
    plan = gspo("plan", "--preset", "qwen3-0.6b-1x1", "--profile", "h100", *sets, env={"COLUMNS": "300"})
    assert plan.returncode == 0, plan.stderr
    assert "rollout correction: decoupled (old log-probs recomputed); sequence-level IS weights" in plan.stdout
    risky = gspo("plan", "--preset", "qwen3-0.6b-1x1", "--profile", "h100", "--set", "rollout.calculate_log_probs=true",
                 "--set", f"{RC}.rollout_is=token", env={"COLUMNS": "300"})
    assert "risk rollout correction: decoupled, rollout_is=token" in " ".join(risky.stdout.split())

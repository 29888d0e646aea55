"""The nightly preset against verl's nightly job script (run by bash, commands stubbed, both sides composed with
verl 0.9.1's config, tests/engines/verl/upstream_tools.py): every override and export the same, or a row of the
preset's `upstream.departures`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engines" / "verl"))
import upstream_tools as upstream  # noqa: E402

from gspo_cli.config import presets  # noqa: E402

pytestmark = pytest.mark.slow
NIGHTLY_8B = Path(__file__).resolve().parents[1] / "engines" / "verl" / "upstream" / "run_gspo_qwen3_8b_fsdp2_npu.sh"


def test_nightly_preset_is_the_nightly_job():
    preset = presets.load_preset("nightly-gspo-qwen3-8b-a2")
    comparison = upstream.compare_preset(preset, NIGHTLY_8B)
    problems = upstream.audit(comparison, preset.upstream.departures)
    assert problems == [], "\n".join(problems)
    assert len(comparison.same) >= 80


def test_a_changed_nightly_value_fails_the_parity_check(tmp_path):
    text = NIGHTLY_8B.read_text()
    line = "ROLLOUT_N=${ROLLOUT_N:-4}"
    assert text.count(line) == 1
    mutated = tmp_path / NIGHTLY_8B.name
    mutated.write_text(text.replace(line, "ROLLOUT_N=${ROLLOUT_N:-8}"))
    preset = presets.load_preset("nightly-gspo-qwen3-8b-a2")
    problems = upstream.audit(upstream.compare_preset(preset, mutated), preset.upstream.departures)
    assert problems == ["actor_rollout_ref.rollout.n: upstream 8, gspo 4: not in upstream.departures"]


NIGHTLY_30B = NIGHTLY_8B.with_name("run_gspo_qwen3_30b_megatron_npu.sh")
# The script's keys verl 0.9.1 no longer has (its param_offload releases the gradient buffers): composed with '+'.
GONE_IN_091 = {"actor_rollout_ref.actor.megatron.grad_offload"}


def test_the_30b_script_sets_a_key_verl_091_refuses():
    """Why GONE_IN_091 exists: the script as written does not compose in verl 0.9.1 (the control for `appended`)."""
    from gspo_cli.engines.verl.schema_check import compose

    run = upstream.run_script(NIGHTLY_30B)
    with pytest.raises(Exception, match="grad_offload"):
        compose(run.overrides)
    assert "model_engine=megatron" in run.overrides and "trainer.total_training_steps=15" in run.overrides


def test_nightly_30b_preset_is_the_megatron_nightly_job():
    preset = presets.load_preset("nightly-gspo-qwen3-30b-a3")
    comparison = upstream.compare_preset(preset, NIGHTLY_30B, gone=GONE_IN_091)
    problems = upstream.audit(comparison, preset.upstream.departures)
    assert problems == [], "\n".join(problems)
    assert len(comparison.same) >= 75
    # the Megatron layout is compared, not skipped: these keys agree with the script
    for key in ("model_engine", "actor_rollout_ref.actor.megatron.expert_model_parallel_size",
                "actor_rollout_ref.actor.megatron.override_transformer_config.moe_router_dtype",
                "actor_rollout_ref.ref.megatron.tensor_model_parallel_size", "trainer.total_training_steps"):
        assert key in comparison.same, key
    print("\n| key | upstream | ours | why |\n|---|---|---|---|")
    for d in preset.upstream.departures:
        print(f"| `{d.key}` | {d.upstream} | {d.ours} | {d.why} |")


@pytest.mark.parametrize("line,new,key", [
    ("actor_ep=${ACTOR_EP:-8}", "actor_ep=${ACTOR_EP:-16}", "actor_rollout_ref.actor.megatron.expert_model_parallel_size"
     "|actor_rollout_ref.ref.megatron.expert_model_parallel_size"),  # the script sets both from ACTOR_EP
    ("    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_router_dtype=fp32",
     "    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_router_dtype=fp64",
     "actor_rollout_ref.actor.megatron.override_transformer_config.moe_router_dtype"),
    ("    trainer.total_training_steps=15", "    trainer.total_training_steps=3", "trainer.total_training_steps"),
])
def test_a_changed_30b_nightly_value_fails_the_parity_check(tmp_path, line, new, key):
    text = NIGHTLY_30B.read_text()
    assert text.count(line) == 1
    mutated = tmp_path / NIGHTLY_30B.name
    mutated.write_text(text.replace(line, new))
    preset = presets.load_preset("nightly-gspo-qwen3-30b-a3")
    problems = upstream.audit(upstream.compare_preset(preset, mutated, gone=GONE_IN_091), preset.upstream.departures)
    keys = key.split("|")
    assert sorted(p.split(":")[0] for p in problems) == sorted(keys), problems

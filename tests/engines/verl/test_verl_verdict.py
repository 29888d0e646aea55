"""Stage 2 of the verl schema check (verl's own validators) runs in a child process started as soon as the overrides
are compiled (engines/verl/verl_verdict.py), so a cold dry-run's verl import runs beside the environment probe and
stage 1's Hydra compose, and the gspo process itself never imports verl. Timing is benchmarks/dry_run.py's; these
tests check the structure that makes it fast and that the verdict is verl's own, unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl import schema_check, verl_verdict
from gspo_cli.engines.verl.compile import compile_preset
from gspo_cli.errors import ConfigError

pytestmark = pytest.mark.slow  # verl's config compose and verl's import in a child (10-60 s on 2 loaded cores)

REPO = Path(__file__).resolve().parents[3]
PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")

# A cold make_plan in a fresh interpreter, recording the order of events and what the gspo process imported.
PROBE = """
import json, sys
from gspo_cli.engines.verl import launch, schema_check, verl_verdict
events = []
real_start, real_compose = verl_verdict.start, schema_check.compose
verl_verdict.start = lambda overrides: events.append("child started") or real_start(overrides)
schema_check.compose = lambda overrides: events.append("compose") or real_compose(overrides)
plan = launch.make_plan("qwen3-32b")
print(json.dumps({"events": events, "verl_in_gspo": "verl" in sys.modules, "torch_in_gspo": "torch" in sys.modules,
                  "validated": plan.schema.validated, "cached": plan.schema.cached,
                  "error": plan.schema_error.message if plan.schema_error else None}))
"""


def test_cold_check_starts_verls_validators_in_a_child_before_compose(gspo_home):
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["validated"] and not seen["cached"] and seen["error"] is None
    # the child first, then stage 1 in this process; verl (and torch) were imported only in the child
    assert seen["events"][0] == "child started" and "compose" in seen["events"], seen
    assert seen["events"].count("child started") == 1
    assert not seen["verl_in_gspo"] and not seen["torch_in_gspo"]
    # the verdict was cached by the child's pass: a second plan is warm and starts nothing
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, timeout=600)
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["cached"] and seen["events"] == [], seen


def test_a_stage_one_rejection_ends_the_early_child(gspo_home):
    loaded = presets.load("qwen3-32b-4x16", ["overrides.verl=[actor_rollout_ref.actor.optim.lrr=2e-6]"])
    compiled = compile_preset(loaded.preset, **PATHS)
    early = schema_check.start_early(compiled, loaded)
    assert early is not None and early.proc.poll() is None
    with pytest.raises(ConfigError, match=r"rejected override `actor_rollout_ref.actor.optim.lrr=2e-6` \(compose\)"):
        schema_check.check(compiled, loaded, early=early)
    assert early.proc.returncode is not None  # killed and reaped, not left running


def test_the_child_gives_verls_own_rejection_and_refuses_foreign_targets():
    ok, text = verl_verdict.start(compile_preset(presets.load(
        "qwen3-32b-4x16", ["overrides.verl=[actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-meen]"]).preset,
        **PATHS).overrides).result()
    assert not ok and "Invalid loss_agg_mode: seq-mean-token-meen" in text
    # control: what the preset schema and stage 1 refuse is refused by the child too, before anything is built
    plain = compile_preset(presets.load("qwen3-32b-4x16").preset, **PATHS).overrides
    ok, text = verl_verdict.start([*plain, "actor_rollout_ref.actor.optim._target_=os.system"]).result()
    assert not ok and "refused to build" in text and "os.system" in text

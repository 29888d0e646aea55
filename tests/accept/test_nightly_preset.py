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

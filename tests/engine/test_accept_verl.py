"""`gspo accept` on verl's real trainer (tiny-verl, engine venv): record a baseline from two runs of the 15-step
job (verl + vLLM-CPU does not repeat a run exactly, so the record takes the spread of two), judge a third run of
the same job against it (pass), and a run with a changed learning rate (fail, exit 1). verl logs the actor's
memory here too (the CPU platform reports the process's peak RSS as max_memory_allocated), so all five metrics
are judged; time metrics are advisory on a CPU host (docs/accept.md)."""

from __future__ import annotations

import json

import pytest
from conftest import gspo

# Four 15-step verl runs (~15 min): outside the CI engine tier's budget, run by `make test-engine-long`.
pytestmark = [pytest.mark.engine, pytest.mark.engine_long, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(3600)]


def test_tiny_verl_record_pass_and_a_changed_setting_fails(verl_home):
    rec = gspo("accept", "--preset", "tiny-verl", "--record", "--repeat", "2")
    assert rec.returncode == 0, rec.stderr[-3000:]
    saved = json.loads((verl_home / "baselines" / "tiny-verl.json").read_text())
    assert len(saved["recorded"]["repeats"]) == 2
    assert saved["values"]["actor/perf/max_memory_allocated_gb"] is not None  # verl logs it, the CPU plugin fills it
    same = gspo("accept", "--preset", "tiny-verl", "--json")
    assert same.returncode == 0, same.stdout[-3000:] + same.stderr[-3000:]
    assert json.loads(same.stdout)["verdict"] == "pass"
    changed = gspo("accept", "--preset", "tiny-verl", "--set", "actor.lr=2e-3", "--json")
    assert changed.returncode == 1, changed.stderr[-3000:]
    failed = {m["metric"] for m in json.loads(changed.stdout)["metrics"] if m["status"] == "fail"}
    assert "critic/rewards/mean" in failed

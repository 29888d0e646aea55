"""`gspo accept` on verl's real trainer (tiny-verl, engine venv): record a baseline from one run of the 15-step
job, judge a second run of the same job against it (pass: with the CPU switches vllm_sample_seeds and
verl_batch_order a tiny-verl job repeats, so the baseline needs no spread of several runs), and a run with a
changed learning rate (fail, exit 1). verl logs the actor's memory here too (the CPU platform reports the
process's peak RSS as max_memory_allocated), so all five metrics are judged; time metrics are advisory on a CPU
host (docs/accept.md)."""

from __future__ import annotations

import json

import pytest
from conftest import gspo

# Three 15-step verl runs (38 min measured on the shared 2-core host, 2026-12-06): outside the CI engine tier's budget, run by `make test-engine-long`.
pytestmark = [pytest.mark.engine, pytest.mark.engine_long, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(3600)]


def test_tiny_verl_repeat_passes_and_a_changed_lr_fails(verl_home):
    rec = gspo("accept", "--preset", "tiny-verl", "--record")
    assert rec.returncode == 0, rec.stderr[-3000:]
    saved = json.loads((verl_home / "baselines" / "tiny-verl.json").read_text())
    assert len(saved["recorded"]["repeats"]) == 1
    assert not [r for r in saved["rules"] if r.get("widened_from") is not None]  # one run: upstream's limits
    assert saved["values"]["actor/perf/max_memory_allocated_gb"] is not None  # verl logs it, the CPU plugin fills it
    same = gspo("accept", "--preset", "tiny-verl", "--json")
    assert same.returncode == 0, same.stdout[-3000:] + same.stderr[-3000:]
    verdict = json.loads(same.stdout)
    print("repeat:", json.dumps(verdict["metrics"], indent=1))
    assert verdict["verdict"] == "pass"
    changed = gspo("accept", "--preset", "tiny-verl", "--set", "actor.lr=2e-3", "--json")
    assert changed.returncode == 1, changed.stderr[-3000:]
    metrics = json.loads(changed.stdout)["metrics"]
    print("lr 2e-3:", json.dumps(metrics, indent=1))
    assert "critic/rewards/mean" in {m["metric"] for m in metrics if m["status"] == "fail"}

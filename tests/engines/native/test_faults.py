"""GSPO_FAULT parsing and firing rules (the faults themselves run in tests/engines/native/test_health_faults.py)."""

from __future__ import annotations

import math

import pytest

from gspo_cli.engines.native.faults import Fault, Injector, parse
from gspo_cli.errors import ConfigError


def test_parse_kinds_and_steps():
    assert parse("crash@3, slow@5") == [Fault("crash", 3), Fault("slow", 5)]
    assert parse(None) == [] and parse("") == []
    for bad in ("boom@3", "crash", "crash@0", "crash@x"):
        with pytest.raises(ConfigError, match="is not KIND@STEP"):
            parse(bad)


def test_crash_and_hang_fire_once_per_run_folder_nan_every_time(tmp_path):
    first = Injector(tmp_path, "crash@3,hang@5,nan@2")
    assert first._at("crash", 3) and not first._at("crash", 4) and first._at("hang", 5)
    restarted = Injector(tmp_path, "crash@3,hang@5,nan@2")  # the trainer after a restart: same run folder
    assert not restarted._at("crash", 3) and not restarted._at("hang", 5)
    assert math.isnan(restarted.loss(2, 1.0)) and restarted.loss(3, 1.0) == 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".fault-crash@3", ".fault-hang@5"]


def test_the_trainer_carries_no_fault_code_and_runs_unwrapped_without_faults(monkeypatch):
    import inspect
    import re

    from gspo_cli.engines.native import trainer
    from gspo_cli.engines.native.faults import with_faults

    monkeypatch.delenv("GSPO_FAULT", raising=False)
    assert with_faults(trainer.NativeTrainer) is trainer.NativeTrainer
    source = inspect.getsource(trainer.NativeTrainer)
    assert not re.search(r"\bfault|injector", source, re.IGNORECASE)
    faulty = with_faults(trainer.NativeTrainer, "nan@2")
    assert issubclass(faulty, trainer.NativeTrainer) and faulty.__name__ == "FaultInjectingNativeTrainer"


def test_nan_fault_poisons_the_loss_once_per_micro_batch_and_the_logged_pg_loss(workspace):
    from native_helpers import quick_preset

    from gspo_cli.engines.native.faults import with_faults
    from gspo_cli.engines.native.trainer import NativeTrainer

    calls: list[float] = []

    class Counting(NativeTrainer):
        def policy_loss(self, *args, **kwargs):
            out = super().policy_loss(*args, **kwargs)
            calls.append(out.loss.item())
            return out

    preset = quick_preset(workspace["sets"], ["actor.ppo_micro_batch_size_per_device=4"])
    trainer = with_faults(Counting, "nan@1")(preset, workspace["runs"] / "nan")
    metrics = trainer.train_step()
    # 4 prompts x 4 responses, mini-batches of 2 prompts (8 rows), micro-batches of 4 rows: 4 loss calls
    assert len(calls) == 4 and not any(math.isnan(c) for c in calls)  # the wrapped call sees a finite loss
    assert math.isnan(metrics["actor/pg_loss"]) and math.isnan(metrics["actor/grad_norm"])
    trainer.step += 1
    assert math.isfinite(trainer.train_step()["actor/pg_loss"])  # step 2: no fault
@pytest.mark.slow


def test_a_malformed_gspo_fault_is_one_line_in_the_cli_and_creates_no_run(gspo, gspo_home):
    proc = gspo("train", "--preset", "tiny", "--local", "--run-name", "f", env={"GSPO_FAULT": "boom@3"})
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    # the switch announces itself first (jobs/fault_switches.py), then the one error line
    assert lines[0].startswith("warning: gspo: fault injection is ON: GSPO_FAULT='boom@3'"), proc.stderr
    assert lines[1] == "Error: GSPO_FAULT='boom@3': 'boom@3' is not KIND@STEP", proc.stderr
    assert proc.stderr.count("is not KIND@STEP") == 1 and "metrics:" not in proc.stderr
    assert not (gspo_home / "runs" / "f").exists()


def test_slow_fault_is_a_4x_step_on_a_simulated_device_clock(workspace):
    """slow@S times steps on a simulated clock (1 s, then 4 s from S), so the throughput rule's input does not
    depend on the machine's load; without faults the trainer times steps on the real clock."""
    from native_helpers import quick_preset

    from gspo_cli.engines.native.faults import with_faults
    from gspo_cli.engines.native.trainer import NativeTrainer

    trainer = with_faults(NativeTrainer, "slow@3")(quick_preset(workspace["sets"]), workspace["runs"] / "slow")
    seconds = []
    for _ in range(4):
        metrics = trainer.train_step()
        trainer.step += 1
        seconds.append(metrics["timing_s/step"])
        assert metrics["perf/throughput"] == metrics["perf/total_num_tokens"] / metrics["timing_s/step"]
    assert seconds == [1.0, 1.0, 4.0, 4.0]
    assert NativeTrainer.clock is not trainer.clock and 0 < NativeTrainer(
        quick_preset(workspace["sets"]), workspace["runs"] / "plain").train_step()["timing_s/step"] != 1.0

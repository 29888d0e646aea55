"""Run-stage failure signatures on real excerpts (tests/fixtures/signatures/, each with its thread URL): the
classifier's kind and signature id, the same through the job wrapper around the verl stand-in, the health rules
(mismatch growth, rollout share) on verl's own metric function and the thread's figures, the exit-0-without-a-step
guard, and no false alarm on the stand-in's normal run or the tiny demo's metrics."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_supervise_verl_standin import _run

from gspo_cli.config.presets import load_preset
from gspo_cli.jobs.failures import Attempt, classify, silent_exit
from gspo_cli.metrics.health import Context, Monitor, gen_share, mismatch, read_events

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "signatures"
DEMO = FIX / "tiny-demo-metrics.jsonl.gz"


def _lines(name: str) -> list[str]:
    return [line for line in (FIX / name).read_text().splitlines() if not line.startswith("#")]


@pytest.mark.parametrize("name, sig, kind, progress", [
    ("hccl_stale_process_verl332.log", "run-hccl-stale-process", "config", False),
    ("hccl_init_error4_verl3947.log", "run-hccl-init", "config", False),
    ("hccl_timeout_vllm_ascend486.log", "run-hccl-timeout", "transient", True),
    ("ray_actor_died_verl1633.log", "run-ray-actor-died", "transient", True),
    ("npu_oom_sleep_vllm_ascend977.log", "run-npu-oom-sleep", "config", True),
])
def test_real_excerpts_are_classified_with_their_signature(name, sig, kind, progress):
    got_kind, cause = classify(1, _lines(name), made_progress=progress)
    assert (got_kind, cause.endswith(f"[{sig}]")) == (kind, True), cause
    assert "fix:" in cause or kind == "transient"


def test_ray_actor_death_text_naming_the_oom_killer_is_not_a_host_oom():
    """Ray's generic ActorDiedError text lists "killed by the OOM killer" as a possible cause: still transient."""
    lines = _lines("ray_actor_died_verl1633.log") + [
        "Some common causes include: (1) the process was killed by the OOM killer due to high memory usage, "
        "(2) ray stop --force was called, or (3) the worker crashed unexpectedly due to SIGSEGV"]
    assert classify(1, lines, made_progress=False)[0] == "transient"


def test_a_lost_node_is_an_unreachable_actor_not_an_out_of_memory():
    """gspo's own 3-node run: the raylet's 'Possible reasons include: (1) SIGKILL by the user or system OOM
    killer' and verl's ActorUnavailableError: a lost node (restart from the checkpoint), not host memory."""
    lines = _lines("ray_node_lost_actor_unavailable_gspo3node.log")
    kind, cause = classify(1, lines, made_progress=True)
    assert kind == "transient" and cause.endswith("[run-ray-actor-died]") and "out of memory" not in cause
    # the raylet's list of guesses alone is no out-of-memory either
    assert "out of memory" not in classify(1, lines[:1], made_progress=True)[1]


def test_an_npu_oom_without_sleep_mode_is_not_the_sleep_signature():
    kind, cause = classify(1, _lines("npu_oom_vllm_ascend1127.log"), made_progress=False)
    assert kind == "config" and "run-npu-oom-sleep" not in cause and "before the first step" in cause


def test_exit_zero_without_a_step_short_of_the_total_is_a_failure():
    nothing = Attempt(number=1, resume_step=None, code=0)
    kind, cause = silent_exit(nothing, 600, 400)
    assert kind == "config" and "from step 400 of 600" in cause and cause.endswith("[run-resume-no-step]")
    assert silent_exit(nothing, 600, 600) is None  # a finished run started again: nothing left to do
    ran = Attempt(number=1, resume_step=400, first_step=401, last_step=600, code=0)
    assert silent_exit(ran, 600, 600) is None


def test_wrapper_fails_an_exit_zero_that_ran_no_step(tmp_path, capsys):
    code, _, run_dir = _run(tmp_path, "zero")
    assert code == 1
    last = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert last.startswith("verl exited with code 1: the training process exited 0 without running a step")


@pytest.mark.parametrize("name, sig, restarted", [("hccl_stale_process_verl332.log", "run-hccl-stale-process", False),
                                                  ("ray_actor_died_verl1633.log", "run-ray-actor-died", True)])
def test_wrapper_restarts_or_stops_by_signature(tmp_path, capsys, name, sig, restarted):
    code, _, run_dir = _run(tmp_path, "log@3", env={"STANDIN_LOG": str(FIX / name)})
    events = read_events(run_dir / "health.jsonl")
    if restarted:
        assert code == 0 and events[0]["action"] == "restart" and events[0]["cause"].endswith(f"[{sig}]")
    else:
        assert code == 1 and events == []  # config: no restart
        assert f"[{sig}]" in capsys.readouterr().err.rstrip().splitlines()[-1]


def _verl_gap_metrics(gap: float) -> dict:
    """training/rollout_probs_diff_* for a batch whose rollout log-probs are `gap` off, by verl's own function."""
    import torch
    from tensordict import TensorDict
    from verl import DataProto
    from verl.utils.debug import metrics

    g = torch.Generator().manual_seed(0)
    old = -torch.rand(4, 16, generator=g)
    batch = DataProto(batch=TensorDict({
        "old_log_probs": old, "rollout_log_probs": old - gap * torch.rand(4, 16, generator=g),
        "responses": torch.zeros(4, 16, dtype=torch.long), "attention_mask": torch.ones(4, 32, dtype=torch.long),
        "response_mask": torch.ones(4, 16, dtype=torch.long)}, batch_size=[4]))
    return {k: float(v) for k, v in metrics.calculate_debug_metrics(batch).items()}


def test_mismatch_rule_fires_when_verls_gap_grows():
    cfg = load_preset("qwen3-0.6b-1x1").trainer.health.mismatch
    steady = [(s, _verl_gap_metrics(0.01)) for s in range(1, 11)]
    assert mismatch(steady, cfg, Context()) is None
    grown = steady + [(11, _verl_gap_metrics(0.05))]
    hit = mismatch(grown, cfg, Context())
    assert hit is not None and "run-mismatch-growing" in hit.message and "early baseline" in hit.message


def test_mismatch_rule_on_the_thread_figures():
    """vime#64: the gap stays at ~0.011 on one stack and climbs monotonically 0.011 -> 0.036 over 30 steps on the
    other; as verl's metric (same definition) the rule is quiet on the first and fires on the second."""
    text = " ".join(_lines("mismatch_vime64.txt"))
    assert "flat (~0.011)" in text and "(~0.011 -> ~0.036)" in text
    cfg = load_preset("qwen3-32b-4x16").trainer.health.mismatch
    flat = [(s, {"training/rollout_probs_diff_mean": 0.011}) for s in range(1, 31)]
    climb = [(s, {"training/rollout_probs_diff_mean": 0.011 + (0.036 - 0.011) * (s - 1) / 29}) for s in range(1, 31)]
    assert all(mismatch(flat[:i], cfg, Context()) is None for i in range(1, 31))
    fired = [i for i in range(1, 31) if mismatch(climb[:i], cfg, Context()) is not None]
    assert fired and 20 <= fired[0] <= 25  # 2x the baseline (median of the first 10 steps), two thirds into the climb


def test_wrapper_warns_on_a_growing_gap_and_not_on_a_steady_one(tmp_path):
    sets = ["trainer.health.warmup_steps=0", "trainer.health.mismatch.baseline_steps=2",
            "trainer.health.mismatch.patience=1"]
    code, seen, run_dir = _run(tmp_path, "mismatch@5", total=6, sets=sets)
    (event,) = read_events(run_dir / "health.jsonl")
    assert code == 0 and event["rule"] == "mismatch" and event["step"] == 5 and event["action"] == "warn"
    assert any(e["kind"] == "health" and e["rule"] == "mismatch" for e in seen)  # the health line


def test_gen_share_fires_on_the_thread_figures_and_points_at_plan():
    fig = dict(line.split(":")[0:2] for line in _lines("timing_verl6747.txt"))
    data = {k: float(v.split()[0]) for k, v in fig.items()}
    cfg = load_preset("qwen3-32b-4x16").trainer.health.gen_share
    hit = gen_share([(94, data)], cfg, Context(rollout="vllm", preset="qwen3-32b-4x16"))
    assert hit is not None and hit.value == pytest.approx(0.7165, abs=1e-3)
    assert "gspo plan --preset qwen3-32b-4x16" in hit.message and "[run-rollout-long-tail]" in hit.message
    assert gen_share([(94, data)], cfg, Context(rollout="hf")) is None  # the native HF rollout: no vLLM levers
    async_preset = load_preset("qwen3-32b-4x16", ["trainer.mode=colocate_async"])
    assert gen_share([(94, data)], cfg, Context.from_preset(async_preset)) is None  # generation overlaps training


def test_no_false_alarm_on_the_standin_normal_run(tmp_path):
    code, seen, run_dir = _run(tmp_path, "", total=14, sets=["trainer.health.warmup_steps=0"])
    assert code == 0 and read_events(run_dir / "health.jsonl") == []
    assert not [e for e in seen if e["kind"] == "health"]


@pytest.mark.parametrize("rollout", ["hf", "vllm"])
def test_no_false_alarm_on_the_tiny_demo(rollout):
    """The tiny demo's real metrics (native engine, CPU) through every rule with the tiny preset's settings."""
    preset = load_preset("tiny")
    ctx = Context.from_preset(preset)
    monitor = Monitor(preset.trainer.health, Context(ctx.loss_mode, ctx.off_policy, rollout, preset.name))
    fired = []
    with gzip.open(DEMO, "rt") as fh:
        for line in fh:
            record = json.loads(line)
            fired += monitor.observe(record["step"], record["data"], now=float(record["step"]))
    if rollout == "vllm":  # CPU generation dominates the demo's step: the rule would fire, and only it
        assert {e.rule for e in fired} <= {"gen_share"}
    else:
        assert fired == [], [(e.rule, e.step, e.message) for e in fired]

"""What `gspo train` prints on the verl route, checked on recorded verl runs (tests/fixtures/verl_runs/README.md):
a line per step (jobs/steps.py), the flat-reward note (health rule `no_signal_yet`), the lines of a failed job's log
that say why (jobs/log_excerpt.py), and the run summary (runs/summary.py). The last test replays a recorded verl
job through the real job wrapper (tests/jobs/replay_verl.py in verl's place) and renders its log as `gspo train`
does now and as it did before."""

from __future__ import annotations

import gzip
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import replayed_verl_job
import yaml
from rich.console import Console

from gspo_cli import job_kinds
from gspo_cli.config.health import HealthSection
from gspo_cli.config.presets import load_preset
from gspo_cli.config.schema import to_jsonable
from gspo_cli.jobs import events
from gspo_cli.jobs.log_excerpt import why_failed
from gspo_cli.jobs.steps import StepLines, duration
from gspo_cli.jobs.view import JobView, plain_line
from gspo_cli.metrics.health import Context, Monitor
from gspo_cli.runs.summary import run_summary, summary_lines

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "verl_runs"


def _log(name: str) -> list[str]:
    return gzip.open(RUNS / f"{name}.job.log.gz", "rt", encoding="utf-8").read().splitlines()


def _metrics(name: str) -> list[dict]:
    return [json.loads(line) for line in gzip.open(RUNS / f"{name}.metrics.jsonl.gz", "rt", encoding="utf-8")]


def _events(name: str, kind: str) -> list[dict]:
    return [e for line in _log(name) if (e := events.parse_line(line)) is not None and e["kind"] == kind]


# ---------------------------------------------------------------- a line per step


def test_step_lines_of_a_recorded_verl_run_show_reward_length_time_and_an_eta_from_the_step_times():
    progress = _events("tiny-moe-verl-cold", "progress")
    steps = StepLines()
    lines = [steps.line(e) for e in progress]
    assert lines[0] == "step 0/16 (validation before training)"  # the recorded event predates val_acc
    first = progress[1]["metrics"]
    assert lines[1] == (f"step 1/16  reward -1.000  resp_len {first['resp_len']:.1f}  step "
                        f"{first['step_s']:.1f}s  ETA {duration(first['step_s'] * 15)}")
    # the ETA: the mean of the newest 5 step times x the steps left
    times = [e["metrics"]["step_s"] for e in progress[1:]]
    assert lines[10].endswith(f"ETA {duration(sum(times[5:10]) / 5 * 6)}")
    assert "ETA" not in lines[-1] and lines[-1].startswith("step 16/16  reward -0.984")
    assert all("clipfrac" not in line for line in lines)


def test_step_line_shows_accuracy_and_validation_accuracy_when_the_step_has_them_and_no_eta_without_a_total():
    line = StepLines().line({"step": 8, "total": None, "metrics": {"score": 0.5, "acc": 0.75, "val_acc": 0.6}})
    assert line == "step 8  reward +0.500  acc 0.750  val acc 0.600"


# ---------------------------------------------------------------- the flat-reward note


def _fired(name: str, health: HealthSection) -> list[tuple[int, str, str]]:
    monitor = Monitor(health, Context())
    return [(e.step, e.rule, e.message) for r in _metrics(name) for e in monitor.observe(r["step"], r["data"])]


def test_a_cold_start_with_every_sample_at_minus_one_gets_one_plain_note_at_the_third_step():
    health = load_preset("tiny-moe-verl").trainer.health
    fired = [f for f in _fired("tiny-moe-verl-cold", health) if f[1] == "no_signal_yet"]
    # steps 1-3 all -1 (patience 3); steps 6-9 are flat again, but the note is not repeated (rearm_steps 10)
    assert [(step, rule) for step, rule, _ in fired] == [(3, "no_signal_yet")]
    message = fired[0][2]
    assert "every sample scored -1" in message and "advantage is 0" in message and "grad_norm 0" in message
    assert "warmer start model" in message and "rollout.n" in message and "max_response_length" in message


def test_the_note_stays_quiet_when_the_reward_moves_or_every_sample_is_right_or_the_run_is_past_its_start():
    health = load_preset("tiny-verl").trainer.health
    assert [f for f in _fired("tiny-verl-warm", health) if f[1] == "no_signal_yet"] == []  # a warm start: mixed
    monitor = Monitor(health, Context())
    solved = {"critic/score/mean": 1.0, "critic/score/max": 1.0, "critic/score/min": 1.0}
    assert [e for s in range(1, 6) for e in monitor.observe(s, solved)] == []  # all right: no "no answer yet"
    late = Monitor(health.model_copy(update={"no_signal_yet": health.no_signal_yet.model_copy(
        update={"until_step": 2})}), Context())
    flat = {"critic/score/mean": -1.0, "critic/score/max": -1.0, "critic/score/min": -1.0}
    assert [e for s in range(1, 6) for e in late.observe(s, flat)] == []  # step 3 is past until_step 2
    control = Monitor(health, Context())
    assert [e.rule for s in range(1, 6) for e in control.observe(s, flat)] == ["no_signal_yet"]


# ---------------------------------------------------------------- why a job failed


def _shown(name: str) -> list[str]:
    return [text for line in _log(name) if (text := plain_line(line)) is not None]


def test_a_failed_verl_job_shows_its_root_cause_and_last_line_not_a_thousand_lines():
    shown = _shown("vllm-init-failed")
    why = why_failed(shown)
    assert len(shown) > 1200 and len(why) <= 10
    text = "\n".join(why)
    # the root cause (vLLM's worker, ~200 lines before the end) and what ended the job
    assert "ValueError: --enable-return-routed-experts is not supported with monolithic MoE kernel" in text
    assert why[-1].startswith("verl exited with code 1: RuntimeError: Engine core initialization failed")
    assert "\x1b[" not in text and "UserWarning" not in text and "File \"" not in text
    # control: the log's last 25 lines (what the follower printed before) never name the root cause
    assert "enable-return-routed-experts is not supported" not in "\n".join(shown[-25:])


def test_a_job_verl_could_not_place_shows_the_placement_error():
    why = why_failed(_shown("no-gpu-slots"))
    assert any(line == "ValueError: Total available GPUs 0 is less than total desired GPUs 1" for line in why)
    assert why[-1] == "verl exited with code 1: ValueError: Total available GPUs 0 is less than total desired GPUs 1"
    assert len(why) <= 10


def test_why_failed_keeps_the_first_and_last_errors_when_there_are_many():
    lines = [f"RuntimeError: failure {i}" for i in range(10)] + ["the end"]
    assert why_failed(lines, max_errors=4, last=1) == [
        "RuntimeError: failure 0", "RuntimeError: failure 1", "RuntimeError: failure 8", "RuntimeError: failure 9",
        "the end"]
    assert why_failed([]) == []


# ---------------------------------------------------------------- the summary


def _run_folder(root: Path, metrics: str, preset: str, total: int, checkpoints=()) -> Path:
    run = root / "runs" / "verl-e2e"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump(to_jsonable(load_preset(preset))))
    (run / "verl_job.json").write_text(json.dumps({"total_steps": total}))
    (run / "metrics.jsonl").write_bytes(gzip.open(RUNS / f"{metrics}.metrics.jsonl.gz").read())
    for step in checkpoints:
        (run / "checkpoints" / f"global_step_{step}").mkdir(parents=True)
    return run


def test_summary_of_a_recorded_verl_run(gspo_home):
    run = _run_folder(gspo_home, "tiny-verl-warm", "tiny-verl", 24, checkpoints=(20, 24))
    (run / "checkpoints" / ".global_step_28.tmp").mkdir()  # a save that never finished is not listed
    lines = summary_lines(run_summary(run, wall_s=250.0))
    train_s = sum(r["data"]["timing_s/step"] for r in _metrics("tiny-verl-warm") if "timing_s/step" in r["data"])
    assert lines[0] == f"Run verl-e2e: finished, 24/24 steps, wall 4m10s (training steps {duration(train_s)})"
    assert lines[1] == "  reward       -0.453 at step 1 -> +0.078 at step 24 (best +0.391 at step 22)"
    # validation at steps 0, 8, 16, 24; the best is the last, so no "best" is repeated
    assert lines[2] == "  val acc      0.641 at step 0 -> 0.703 at step 24 (val-core/arith/acc/mean@1)"
    assert lines[3] == f"  checkpoints  global_step_20, global_step_24 in {run / 'checkpoints'}"
    assert lines[4] == f"  metrics      {run / 'metrics.jsonl'}"
    assert lines[5] == "Next:" and "  evaluate  gspo eval arith --preset tiny-verl --model verl-e2e:all" in lines
    many = summary_lines({**run_summary(run), "checkpoints": [4, 8, 12, 16, 20, 24]})
    assert f"  checkpoints  global_step_4, ..., global_step_20, global_step_24 (6) in {run / 'checkpoints'}" in many


# ---------------------------------------------------------------- through the job wrapper


@pytest.mark.slow
def test_a_replayed_verl_job_through_the_wrapper_prints_gspo_lines_not_verls_log(tmp_path, gspo_home):
    run = gspo_home / "runs" / "mv5"
    spec = replayed_verl_job.write_job(run, save_freq=4)
    job_log = io.StringIO()
    with redirect_stdout(job_log):  # what Ray keeps as the job's log
        assert job_kinds.run("verl-train", [str(spec)]) == 0

    def terminal(**view) -> list[str]:
        screen = io.StringIO()
        with JobView(console=Console(file=screen, width=200, no_color=True), hold_errors=True, **view) as v:
            v.feed(job_log.getvalue())
        return screen.getvalue().splitlines()

    before = terminal()  # the follower as it was: the job's own lines streamed, a bar drawn once at the end
    after = terminal(quiet=True, step_lines=True)
    assert len(before) > 1000 and any("torchtitan engine is not available" in line for line in before)
    steps = [line for line in after if line.startswith("step ")]
    assert [int(line.split()[1].split("/")[0]) for line in steps] == list(range(17))  # step 0..16, each once
    assert steps[4].startswith("step 4/16  reward -0.984  val acc 0.000  resp_len")
    notes = [line for line in after if "no_signal_yet" in line]
    assert len(notes) == 1 and "at step 3: every sample scored -1" in notes[0]
    assert not any("torchtitan" in line or "Training Progress" in line or " pid=" in line for line in after)
    assert len(after) < 30, "\n".join(after)
    summary = summary_lines(run_summary(run))
    assert summary[0].startswith("Run mv5: finished, 16/16 steps")
    assert any(line.startswith("  health       2 event(s): no_signal_yet at step 3, truncation at step 15")
               for line in summary)


def test_summary_of_a_run_whose_job_failed_midway_says_where_it_got_to_and_how_to_resume(gspo_home):
    run = _run_folder(gspo_home, "tiny-verl-warm", "tiny-verl", 24, checkpoints=(4, 8))
    kept = (run / "metrics.jsonl").read_text().splitlines()[:11]  # steps 0-10
    (run / "metrics.jsonl").write_text("\n".join(kept) + "\n")
    (run / "job_state.json").write_text(json.dumps({"status": "failed", "exit_code": 1, "engine": "verl"}))
    lines = summary_lines(run_summary(run))
    assert lines[0].startswith("Run verl-e2e: failed, 10/24 steps")
    assert "  resume    gspo train --resume verl-e2e" in lines
    assert f"  checkpoints  global_step_4, global_step_8 in {run / 'checkpoints'}" in lines

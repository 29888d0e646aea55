"""A verl run resumes from the newest checkpoint whose step was logged (engines/verl/resume_point.py): verl saves a
step's checkpoint before logging its metrics, and a job lost between the two (CI, the 3-node test: steps 1 2 4 5 ...
after a resume from global_step_3) must run that step again rather than never log it."""

from __future__ import annotations

import json

from gspo_cli.engines.verl.resume_point import choose, resume_point


def test_choose_skips_checkpoints_whose_step_was_never_logged():
    assert choose([1, 2, 3], {1, 2}).step == 2 and choose([1, 2, 3], {1, 2}).skipped == [3]
    assert choose([1, 2, 3], {1, 2, 3}).step == 3 and not choose([1, 2, 3], {1, 2, 3}).skipped  # control
    assert choose([2, 3], {1}).step == 3  # no checkpoint's step logged: the newest, as verl would
    assert choose([1, 2, 3], set()).step == 3  # no metrics to go by
    assert choose([], {1}).step is None


def _run(tmp_path, checkpoints, logged):
    run = tmp_path / "runs" / "r"
    for s in checkpoints:
        (run / "checkpoints" / f"global_step_{s}").mkdir(parents=True)
    (run / "checkpoints" / "latest_checkpointed_iteration.txt").write_text(str(max(checkpoints)))
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "data": {"critic/score/mean": 0.1}}) + "\n"
                                               for s in logged))
    return run


def test_a_run_lost_between_save_and_log_resumes_one_step_earlier_and_says_so(tmp_path):
    point = resume_point(_run(tmp_path, [1, 2, 3], [1, 2]))
    assert point.step == 2
    assert "resuming from global_step_2, not global_step_3" in point.note()
    assert resume_point(_run(tmp_path / "b", [1, 2, 3], [1, 2, 3])).note() is None


def test_verl_resume_and_the_job_restart_use_it(tmp_path, gspo_home):
    from gspo_cli.engines.verl.job import VerlAttempts
    from gspo_cli.engines.verl.launch import _resolve_resume

    run = _run(gspo_home, [1, 2, 3], [1, 2])  # $GSPO_HOME/runs/r
    (run / "job_state.json").write_text(json.dumps({"status": "failed", "engine": "verl"}))
    _, checkpoint, step = _resolve_resume("r")
    assert step == 2 and checkpoint.name == "global_step_2"
    assert VerlAttempts({"overrides": []}, run).resume_step() == 2

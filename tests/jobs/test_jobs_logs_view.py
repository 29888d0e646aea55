"""`gspo jobs logs ID [--follow]` shows a job as the command that started it did (issue #44, item 1): for a verl
`gspo train` job a line per step, verl's and vLLM's own output held in the log; `--raw` prints the whole log, colour
codes removed when stdout is not a terminal. Against a real Ray head on 127.0.0.1, with a real verl job log replayed
through the real job wrapper (tests/jobs/replay_verl.py in verl's place: the recorded 16-step tiny-moe-verl run,
1,211 lines, most with ANSI colour codes)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import replayed_verl_job

from gspo_cli.jobs import client as jobs
from gspo_cli.jobs.jobspec import JobSpec

pytestmark = [pytest.mark.ray, pytest.mark.slow]



def _replayed_verl_job(gspo_home: Path) -> JobSpec:
    """The verl-train job `gspo train` submits (engines/verl/launch.job_spec: its output held, a line per step),
    with the recorded run replayed in verl's place."""
    spec = replayed_verl_job.write_job(gspo_home / "runs" / "mv5", save_freq=-1)
    return JobSpec("verl-train", [str(spec)], run="mv5", serves="train", label="verl job", step_lines=True,
                   held_output="verl's and vLLM's own output; --verbose streams it here")


def _steps(lines: list[str]) -> list[int]:
    return [int(line.split()[1].split("/")[0]) for line in lines if line.startswith("step ")]


def test_jobs_logs_shows_a_verl_train_job_as_train_does_and_raw_shows_the_whole_log(ray_head, gspo, gspo_home):
    job = jobs.submit_job(_replayed_verl_job(gspo_home), address=ray_head.dashboard_url)
    at = ["--address", ray_head.dashboard_url]

    # What the Ctrl-C detach message of `gspo train` says to run: the job is followed live from its start.
    followed = gspo("jobs", "logs", job.job_id, "--follow", *at, timeout=300)
    assert followed.returncode == 0, followed.stderr[-3000:]
    shown = (followed.stdout + followed.stderr).splitlines()
    print(f"jobs logs --follow: {len(shown)} lines")
    assert _steps(shown) == list(range(17)), "\n".join(shown)  # step 0..16, each once
    assert not any("torchtitan" in line or "Training Progress" in line or "\x1b" in line for line in shown)
    assert any("no_signal_yet" in line and "at step 3" in line for line in shown)
    assert shown[-1] == f"Job {job.job_id} succeeded."
    assert len(shown) < 30, "\n".join(shown)

    # Read back after the end: the same lines on stdout (the log is the data).
    read = gspo("jobs", "logs", job.job_id, *at)
    assert read.returncode == 0, read.stderr
    lines = read.stdout.splitlines()
    print(f"jobs logs: {len(lines)} lines")
    assert _steps(lines) == list(range(17)) and len(lines) < 30, read.stdout
    assert not any("torchtitan" in line for line in lines)

    # --raw: every line Ray keeps, verl's and vLLM's included, without colour codes on a pipe.
    raw = gspo("jobs", "logs", job.job_id, "--raw", *at)
    assert raw.returncode == 0, raw.stderr
    everything = raw.stdout.splitlines()
    print(f"jobs logs --raw: {len(everything)} lines")
    recorded = gzip.open(replayed_verl_job.RECORDED, "rt", encoding="utf-8").read()
    assert "\x1b[" in recorded and "\x1b" not in raw.stdout  # the job printed colour codes; a pipe gets none
    assert len(everything) > 1000 and any("torchtitan engine is not available" in line for line in everything)
    assert sum(line.startswith('@@gspo {"kind": "progress"') for line in everything) == 17
    follow_raw = gspo("jobs", "logs", job.job_id, "--raw", "--follow", *at)
    assert follow_raw.returncode == 0 and len(follow_raw.stdout.splitlines()) == len(everything)


def test_a_job_whose_metadata_records_no_view_is_shown_whole_as_before(ray_head):
    """The control: the view comes from the job's metadata, not from the log's content. A job without the entry
    (submitted by an older gspo, or by anyone) streams its lines, colour codes removed."""
    import io

    from rich.console import Console

    from gspo_cli.jobs.view import JobView
    from gspo_cli.jobs.view_mode import ViewMode

    recorded = gzip.open(replayed_verl_job.RECORDED, "rt", encoding="utf-8").read()
    screen = io.StringIO()
    with JobView.of(ViewMode.from_metadata({"command": "train"}), console=Console(file=screen, width=200),
                    replay=True) as view:
        view.feed(recorded)
    lines = screen.getvalue().splitlines()
    assert len(lines) > 1000 and any("torchtitan" in line for line in lines)
    assert "\x1b" not in screen.getvalue()
    assert ViewMode.from_metadata(JobSpec("eval").job_metadata()) == ViewMode()  # a streamed job records nothing
    assert ViewMode.from_metadata({"gspo_view": "quiet,steps,bogus"}) == ViewMode(quiet=True, step_lines=True)

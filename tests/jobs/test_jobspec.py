"""A job is one value (jobs/jobspec.py `JobSpec`) and a submitted job a handle (jobs/client.py `JobHandle`): the run
lock's claim (runs/lock.py `LockClaim`) is taken before anything is submitted, follows Ray's id, and is released
when the run folder cannot be written or Ray never gets the job. The Ray parts run against a real local head."""

from __future__ import annotations

import pytest
import requests
from ray.dashboard.modules.dashboard_sdk import SubmissionClient

from gspo_cli.errors import ClusterError, ConfigError
from gspo_cli.jobs import client as jobs
from gspo_cli.jobs.jobspec import JobSpec
from gspo_cli.jobs.target import ClusterTarget
from gspo_cli.runs import lock


def _sdk_error(status: int, text: str) -> RuntimeError:
    response = requests.Response()
    response.status_code, response._content = status, text.encode()
    try:
        SubmissionClient._raise_error(None, response)  # type: ignore[arg-type]  # Ray's own SDK makes the error
    except RuntimeError as exc:
        return exc
    raise AssertionError("unreachable")


class _Ray:
    """Ray's JobSubmissionClient as it answers `submit_job`: each answer an id (taken) or an error (raised)."""

    def __init__(self, *answers):
        self.answers, self.ids = list(answers), []

    def submit_job(self, **kw):
        self.ids.append(kw["submission_id"])
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return kw["submission_id"]


@pytest.fixture
def fake_cluster(monkeypatch):
    def use(ray: _Ray) -> None:
        target = ClusterTarget("http://127.0.0.1:1", "127.0.0.1:2", embedded=True, source="test")
        monkeypatch.setattr(jobs, "resolve_target", lambda *a, **k: target)
        monkeypatch.setattr(jobs, "client", lambda t: ray)
        monkeypatch.setattr(jobs.time, "sleep", lambda s: None)

    return use


def test_the_spec_names_the_job_and_its_metadata():
    spec = JobSpec("verl-train", ["x"], name="p", run="r1", serves="train", metadata={"engine": "verl"})
    assert spec.job_name == "r1" and spec.user_command == "train"
    meta = spec.job_metadata()
    assert meta["command"] == "train" and meta["run"] == "r1" and meta["engine"] == "verl" and meta["preset"] == "p"
    assert JobSpec("eval").job_name == "gspo" and "run" not in JobSpec("eval").job_metadata()


def test_ray_refusing_the_job_frees_the_run(tmp_path, fake_cluster):
    run = tmp_path / "r1"
    written = []
    fake_cluster(_Ray(_sdk_error(400, "Traceback ...\nValueError: bad runtime_env")))
    spec = JobSpec("train", None, run="r1", claim=lock.LockClaim(run, "native", on_taken=lambda t, j: written.append(j)))
    with pytest.raises(ClusterError, match="Ray refused the job: Request failed with status code 400"):
        jobs.submit_job(spec)
    assert written and lock.read(run) is None  # the claim was taken, the folder written, then released


def test_the_lock_follows_the_id_ray_took(tmp_path, fake_cluster):
    run = tmp_path / "r2"
    ray = _Ray(_sdk_error(400, "ValueError: Job with submission_id x already exists. Please use a different "
                               "submission_id."), "ok")
    fake_cluster(ray)
    job = jobs.submit_job(JobSpec("train", None, run="r2", claim=lock.LockClaim(run, "native")))
    assert job.job_id == ray.ids[1] == f"{ray.ids[0]}-2"
    assert lock.read(run)["job_id"] == job.job_id


def test_a_run_folder_that_cannot_be_written_frees_the_run(tmp_path, fake_cluster):
    run = tmp_path / "r3"
    ray = _Ray("ok")
    fake_cluster(ray)

    def write(target, job_id):
        raise ConfigError("cannot write the run folder")

    with pytest.raises(ConfigError):
        jobs.submit_job(JobSpec("train", None, run="r3", claim=lock.LockClaim(run, "native", on_taken=write)))
    assert lock.read(run) is None and ray.ids == []  # nothing submitted


def test_a_busy_run_is_refused_before_anything_is_submitted(tmp_path, fake_cluster):
    run = tmp_path / "r4"
    lock.claim(run, "r4-train-other", engine="native")  # another job's claim; its CLI (this process) is alive
    ray = _Ray("ok")
    fake_cluster(ray)
    with pytest.raises(lock.RunBusyError):
        jobs.submit_job(JobSpec("train", None, run="r4", claim=lock.LockClaim(run, "native")))
    assert ray.ids == [] and lock.read(run)["job_id"] == "r4-train-other"  # the holder's lock is untouched


@pytest.mark.ray
def test_a_real_job_through_its_handle(ray_head, tmp_path):
    run = tmp_path / "r5"
    spec = JobSpec("cluster-smoke", None, name="cluster", run="r5", claim=lock.LockClaim(run, "native"))
    job = jobs.submit_job(spec, address=ray_head.dashboard_url)
    assert lock.read(run)["job_id"] == job.job_id and job.job_id.startswith("r5-cluster-smoke-")
    assert job.follow() == 0
    assert job.status()["status"] == "SUCCEEDED"
    again = jobs.handle(job.job_id, ray_head.dashboard_url)
    assert again.status()["status"] == "SUCCEEDED" and "@@gspo" in again.logs()
    with pytest.raises(ClusterError, match="no job with id 'no-such-job'"):
        jobs.handle("no-such-job", ray_head.dashboard_url).status()

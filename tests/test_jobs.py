"""The Ray job layer against a real local Ray head on 127.0.0.1 (no mocks of Ray or of our code)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gspo_cli.jobs import client as jobs
from gspo_cli.jobs import events, procs
from gspo_cli.jobs.view import JobView

pytestmark = pytest.mark.ray


def _target(ray_head):
    return jobs.resolve_target(ray_head.dashboard_url)


def _wait_status(ray_head, job_id, wanted, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = jobs.job_status(job_id, ray_head.dashboard_url)["status"]
        if status in wanted:
            return status
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} never reached {wanted}")


def test_submit_and_follow_to_success(ray_head, gspo):
    proc = gspo("cluster", "smoke", "--address", ray_head.dashboard_url, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert len(result["nodes"]) == 1 and result["resources"]["CPU"] >= 1
    assert result["nodes"][0]["reward"] == "ok"  # the node's Python imports pkg://gspo_cli.rewards.verl_entry
    assert "succeeded" in proc.stderr
    listed = json.loads(gspo("jobs", "list", "--address", ray_head.dashboard_url, "--json").stdout)
    mine = [row for row in listed if row["metadata"].get("command") == "cluster-smoke"]
    assert mine and mine[0]["status"] == "SUCCEEDED" and mine[0]["job_id"].startswith("cluster-cluster-smoke-")


def test_smoke_in_process_reaches_only_the_cluster_it_names(ray_head, gspo):
    # --local runs the check in this process: its driver joins the named GCS address with its token ...
    proc = gspo("cluster", "smoke", "--local", "--address", ray_head.address, "--json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["nodes"]) == 1
    # ... and with nothing named (empty $GSPO_HOME, no RAY_ADDRESS) it says so instead of attaching to whatever
    # Ray cluster this host ran last (ray.init's "auto"; the session's head is running right now).
    bare = gspo("cluster", "smoke", "--local")
    assert bare.returncode == 1 and "Error: no Ray cluster" in bare.stderr and "Traceback" not in bare.stderr
    dashboard_only = gspo("cluster", "smoke", "--local", "--address", ray_head.dashboard_url)
    assert dashboard_only.returncode == 2 and "not the GCS address" in dashboard_only.stderr


def test_failing_job_gives_its_exit_code_and_log_tail(ray_head, gspo):
    script = "import sys; print('working...'); print('something broke', file=sys.stderr); sys.exit(3)"
    job_id = jobs.submit(_target(ray_head), f"{sys.executable} -c \"{script}\"", job_id="fail-test")
    proc = gspo("jobs", "logs", job_id, "--follow", "--address", ray_head.dashboard_url)
    assert proc.returncode == 3, proc.stderr
    assert f"Job {job_id} failed (exit code 3)" in proc.stderr
    assert "something broke" in proc.stderr and f"gspo jobs logs {job_id}" in proc.stderr
    assert "Traceback" not in proc.stderr
    status = json.loads(gspo("jobs", "status", job_id, "--address", ray_head.dashboard_url, "--json").stdout)
    assert status["status"] == "FAILED" and status["exit_code"] == 3


def test_stop_stops_a_running_job(ray_head, gspo):
    job_id = jobs.submit(_target(ray_head), "sleep 600", job_id="sleep-test")
    _wait_status(ray_head, job_id, {"RUNNING"})
    proc = gspo("jobs", "stop", job_id, "--address", ray_head.dashboard_url, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "STOPPED"


def test_ctrl_c_detaches_and_the_job_keeps_running(ray_head):
    job_id = jobs.submit(_target(ray_head), "sleep 600", job_id="detach-test")
    _wait_status(ray_head, job_id, {"RUNNING"})
    # SIGINT as a terminal delivers it (a shell's background job would inherit it ignored).
    follower = subprocess.Popen([sys.executable, "-m", "gspo_cli", "jobs", "logs", job_id, "--follow", "--address",
                                 ray_head.dashboard_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in follower.stderr:  # Ctrl-C once it follows (the job's log streams), not while it still starts
        seen.append(line)
        if "sleep 600" in line:
            break
    follower.send_signal(signal.SIGINT)
    rest, stderr = follower.communicate(timeout=60)
    stderr = "".join(seen) + stderr
    assert follower.returncode == 130, stderr
    assert "keeps running" in stderr and f"gspo jobs stop {job_id}" in stderr
    assert jobs.job_status(job_id, ray_head.dashboard_url)["status"] == "RUNNING"
    jobs.stop_job(job_id, ray_head.dashboard_url)


def test_unknown_job_id_is_a_clean_error(ray_head, gspo):
    for args in (["status", "no-such-job"], ["logs", "no-such-job"], ["stop", "no-such-job"]):
        proc = gspo("jobs", *args, "--address", ray_head.dashboard_url)
        assert proc.returncode == 1
        assert "no job with id 'no-such-job'" in proc.stderr and "Traceback" not in proc.stderr


def test_unreachable_address_is_one_line(gspo):
    # No token named (this test does not ask for the session's head and its token): gspo first says it sends none
    # to a cluster it did not record, then the one error line.
    # ... and names none itself: under xdist an earlier test on the same worker may have left Ray's token variables
    # in this process (CI: the notice went missing), and gspo rightly uses a token the user names.
    proc = gspo("jobs", "list", "--address", "http://127.0.0.1:9", env={"RAY_AUTH_TOKEN": "", "RAY_AUTH_TOKEN_PATH": ""})
    assert proc.returncode == 1
    notice, error = proc.stderr.splitlines()[:2]
    assert notice.startswith("Using the Ray cluster at http://127.0.0.1:9 (from --address): not a cluster gspo")
    assert error.startswith("Error: cannot reach Ray at http://127.0.0.1:9 (from --address)")
    assert proc.stderr.count("Error:") == 1
    assert "gspo cluster up" in proc.stderr and "Traceback" not in proc.stderr


def test_no_cluster_named_and_no_head_running(gspo):
    proc = gspo("jobs", "list")
    assert proc.returncode == 1 and "no Ray cluster" in proc.stderr


def test_cluster_status_with_no_cluster_says_so_and_exits_3(gspo):
    """No cluster is a state `cluster status` reports (exit 3, LSB's "not running"), not an error; a cluster
    named but unreachable stays an error (exit 1)."""
    proc = gspo("cluster", "status")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.startswith("No Ray cluster: no --address") and "gspo train --preset tiny" in proc.stdout
    assert "Error" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    as_json = gspo("cluster", "status", "--json")
    assert as_json.returncode == 3
    payload = json.loads(as_json.stdout)
    assert set(payload) == {"running", "message", "hint"} and payload["running"] is False
    assert payload["message"].startswith("no Ray cluster") and "gspo cluster up" in payload["hint"]
    named = gspo("cluster", "status", "--address", "http://127.0.0.1:9")  # control: named, nothing there
    assert named.returncode == 1 and "Error: cannot reach Ray" in named.stderr


def test_embedded_head_is_started_reused_and_torn_down(gspo, gspo_home):
    from gspo_cli.jobs import local_head

    first = gspo("cluster", "smoke", "--json")
    assert first.returncode == 0, first.stderr
    assert "Starting the embedded local Ray head" in first.stderr
    record = local_head.read_record()
    assert record is not None and record.dashboard_url.startswith("http://127.0.0.1:")
    status = json.loads(gspo("cluster", "status", "--json").stdout)
    assert status["running"] and status["embedded"] and status["embedded_pid"] == record.pid
    assert status["resources"]["CPU"] >= 1 and status["embedded_binds"] == "127.0.0.1 only"
    assert [n["node_ip"] for n in status["nodes"]] == ["127.0.0.1"]  # Ray's own view: the node is on loopback
    second = gspo("cluster", "smoke")
    assert second.returncode == 0 and "Starting the embedded" not in second.stderr  # reused
    down = gspo("cluster", "down")
    assert down.returncode == 0 and "Stopped the embedded Ray head" in down.stderr
    assert local_head.read_record() is None
    # Nothing of that process group is left running (zombies of an exited parent may linger until reaped).
    assert not procs.group_alive(record.pid)
    # Ray stopped its node at once: no SIGTERM drain (up to 30 s; procs.no_drain_env), which Ray logs when it runs
    # ("Node ... received SIGTERM. Draining for up to 30.0 seconds": every stop on the code before it)
    log = Path(record.log_file).read_text()
    assert "Ray runtime started" in log and "Draining for up to" not in log
    again = gspo("cluster", "down")
    assert again.returncode == 0 and "nothing to stop" in again.stderr
    assert Path(record.temp_dir).is_dir()  # `cluster down` never deletes Ray's temp dir...
    temp = Path(record.temp_dir)  # ...but this test's own may go (with gspo's private folder around it)
    shutil.rmtree(temp.parent if temp.parent.name.startswith("gspo-ray-") else temp)


# ---------------------------------------------------------------- event rendering (pure)


def test_events_round_trip_through_log_lines(capsys):
    events.progress(3, 10, task="train", metrics={"critic/score/mean": 0.5})
    events.result({"accuracy": 0.9})
    lines = capsys.readouterr().out.splitlines()
    parsed = [events.parse_line(line) for line in lines]
    assert parsed[0] == {"kind": "progress", "step": 3, "total": 10, "task": "train",
                         "metrics": {"critic/score/mean": 0.5}}
    assert parsed[1] == {"kind": "result", "payload": {"accuracy": 0.9}}
    assert events.parse_line("plain log line") is None
    assert events.parse_line(events.PREFIX + "{not json") is None


def test_job_view_reassembles_chunked_lines():
    view = JobView(quiet=True)
    line = events.PREFIX + json.dumps({"kind": "result", "payload": {"ok": 1}})
    with view:
        for i in range(0, len(line), 7):
            view.feed(line[i:i + 7])
        view.feed("\n")
    assert view.result == {"ok": 1}


@pytest.mark.ray
def test_embedded_head_start_survives_a_port_taken_meanwhile_and_says_why_when_it_cannot(gspo_home, monkeypatch):
    """A port picked free can be taken before Ray binds it (a busy host, another cluster starting): `ray start`
    then exits at once, and gspo tries again on new ports. When every try fails, one error names Ray's own
    reason, and nothing is recorded as running."""
    import socket

    from gspo_cli.errors import ClusterError
    from gspo_cli.jobs import local_head

    real_free_port = local_head._free_port
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        first_gcs = iter([port])  # the first try's GCS port is the taken one, later tries get free ports
        monkeypatch.setattr(local_head, "_free_port", lambda: next(first_gcs, None) or real_free_port())
        record = local_head.start(quiet=True)
        try:
            assert local_head.running() == record and record.address != f"127.0.0.1:{port}"
            assert "Failed to start GCS" in Path(record.log_file).read_text()  # the first try did fail
        finally:
            local_head.stop()
        monkeypatch.setattr(local_head, "_free_port", lambda: port)  # every try on the taken port
        with pytest.raises(ClusterError) as caught:
            local_head.start(quiet=True)
    message = caught.value.message
    print(message)
    assert message.startswith("the embedded Ray head exited during start (code "), message
    # Ray's own reason, e.g. "ValueError: Ray component client_server is trying to use a port number N that is
    # used by other components." or "RuntimeError: Failed to start GCS. ..."
    assert "3 tries, each on new ports): " in message and "Error: " in message.split("ports): ")[1], message
    assert local_head.running() is None

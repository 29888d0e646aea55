"""The embedded Ray head: what its processes listen on, and how long `gspo cluster down` takes to stop it.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/embedded_head.py [--rounds N] [--jobs]

starts the embedded head in a fresh temporary $GSPO_HOME through gspo's own code (`local_head.start`), optionally
runs one `gspo cluster smoke` job on it first (`--jobs`: the job leaves idle workers behind, as a `gspo train`
does) or leaves a job running on it (`--busy`: a Ray task holds a worker lease, as a running job or a live actor
does; Ray 2.60's SIGTERM drain waits for those), prints every listening TCP socket of the head's process group (`ss -ltnp`: address, port,
process), then times `gspo cluster down` (a subprocess, as a user runs it) and checks that the group is gone.
Point PYTHONPATH at another checkout to measure its code the same way (the before/after figures in
docs/benchmarks.md "The embedded head: binds and stop time").
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _group(pgid: int) -> dict[int, str]:
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found[int(entry.name)] = name
    return found


def _workers(pgid: int) -> dict[int, str]:
    """The group's children outside it: Ray's workers, each in a process group of its own."""
    members = set(_group(pgid))
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            if int(fields[1]) in members and int(entry.name) not in members and fields[0] != "Z":
                found[int(entry.name)] = (entry / "comm").read_text().strip()
        except OSError:
            continue
    return found


def _listening(pids: set[int]) -> list[tuple[str, str, str]]:
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        local = parts[3]
        for name, pid in re.findall(r'\("([^"]+)",pid=(\d+)', line):
            if int(pid) in pids:
                host, port = local.rsplit(":", 1)
                rows.append((host, port, name))
    return sorted(set(rows), key=lambda r: (r[2], int(r[1])))


def _gspo(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gspo_cli", *args], env=env, capture_output=True, text=True)


BUSY = ("import ray, time; ray.init(); ray.get(ray.remote(lambda: time.sleep(600)).remote())")


def _start_busy_job(record) -> None:
    """A job whose task holds a worker lease until the head stops; returns once the task runs."""
    import shlex

    from ray.job_submission import JobSubmissionClient

    from gspo_cli.jobs import auth

    auth.use_in_process(auth.TOKEN, record.token_file)
    client = JobSubmissionClient(record.dashboard_url)
    job = client.submit_job(entrypoint=f"{shlex.quote(sys.executable)} -c {shlex.quote(BUSY)}")
    deadline = time.monotonic() + 300
    while str(client.get_job_status(job)).rsplit(".", 1)[-1] != "RUNNING" and time.monotonic() < deadline:
        time.sleep(1)
    while "ray::<lambda>" not in _workers(record.pid).values() and time.monotonic() < deadline:
        time.sleep(1)  # the task's worker (its lease) is up
    assert time.monotonic() < deadline, "the busy job's task never ran"


def one_round(jobs: bool, busy: bool = False) -> tuple[float, list[tuple[str, str, str]], bool]:
    from gspo_cli.jobs import local_head

    home = tempfile.mkdtemp(prefix="gspo-bench-head-")
    os.environ["GSPO_HOME"] = home
    env = dict(os.environ)
    record = local_head.start()
    try:
        if jobs:
            smoke = _gspo("cluster", "smoke", env=env)
            assert smoke.returncode == 0, smoke.stderr[-2000:]
        if busy:
            _start_busy_job(record)
        deadline = time.monotonic() + 60
        wanted = {"raylet", "gcs_server"}
        def processes() -> set[int]:
            return set(_group(record.pid)) | set(_workers(record.pid))

        binds = _listening(processes())
        while not wanted <= {n for *_, n in binds} and time.monotonic() < deadline:
            time.sleep(1)
            binds = _listening(processes())
        start = time.monotonic()
        down = _gspo("cluster", "down", env=env)
        took = time.monotonic() - start
        assert down.returncode == 0, down.stderr
        return took, binds, not _group(record.pid)
    finally:
        local_head.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--jobs", action="store_true", help="run one `gspo cluster smoke` job before the stop")
    parser.add_argument("--busy", action="store_true", help="stop while a job's task runs on the head")
    args = parser.parse_args()
    import gspo_cli

    print(f"gspo_cli from {Path(gspo_cli.__file__).parent}; load {os.getloadavg()[0]:.1f}")
    for i in range(args.rounds):
        took, binds, gone = one_round(args.jobs, args.busy)
        if i == 0:
            print("| process | listens on | port |")
            print("|---|---|---|")
            for host, port, name in binds:
                print(f"| {name} | {host} | {port} |")
        print(f"round {i + 1}: `gspo cluster down` {took:.1f} s, process group gone: {gone}")


if __name__ == "__main__":
    main()

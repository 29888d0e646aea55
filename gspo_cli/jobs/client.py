"""The Ray job layer: every long-running gspo command runs as a Ray job through here.

Which cluster and which token: `target.py`. Following a job (progress, node loss, exit code): `follow.py`.
`run_job(JobSpec(...))` is what commands call: it runs `python -m gspo_cli.job_kinds COMMAND ARGS...` either
in-process (`local=True`) or as a Ray job, renders its progress events (`view.py`) and returns its exit code;
`submit_job` gives a `JobHandle` (follow, status, logs, stop) instead. Ray's failures are classified in
`ray_errors.py`.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.errors import ClusterError
from gspo_cli.jobs import local_head, ray_errors
from gspo_cli.jobs.follow import TERMINAL, follow_job, job_info, status_name
from gspo_cli.jobs.jobspec import JobSpec, RunClaim
from gspo_cli.jobs.target import ClusterTarget, client, raise_for, resolve_target
from gspo_cli.jobs.view_mode import RAW, ViewMode
from gspo_cli.shell import quote

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

# Run the job's driver on the node `gspo cluster up/join` named so (its `gspo-node` label): for the native engine
# on a cluster, where the one device it trains on is a matter of which node.
JOB_NODE_VAR = "GSPO_JOB_NODE"

__all__ = ["ClusterTarget", "JobHandle", "JobSpec", "RunClaim", "client", "follow_job", "handle", "resolve_target",
           "run_job", "submit", "submit_job"]


# ------------------------------------------------------------------ submit


def submission_id(preset_name: str, command: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{preset_name or 'gspo'}-{command}")
    return f"{safe}-{stamp}"


def entrypoint(command: str, entry_args: list[str], python: str) -> str:
    from gspo_cli.jobs.entry import command_line

    return " ".join(shlex.quote(p) for p in command_line(python, command, entry_args))


def job_env(env_vars: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for the job: `env_vars` from the caller (the preset's exports as `gspo env exports` fits
    them: gspo_cli.env.exports.job_vars; this layer sits below env/) plus what gspo itself needs."""
    from gspo_cli import layout

    env: dict[str, str] = dict(env_vars or {})
    env["GSPO_HOME"] = str(layout.gspo_home())
    env.setdefault("PYTHONUNBUFFERED", "1")
    # Our jobs report progress as events; tqdm bars of transformers/huggingface_hub would only clutter the log.
    env.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    # Fault injection for tests (jobs/fault_switches.py) travels only when the test asks (GSPO_FAULTS_TO_JOBS=1).
    from gspo_cli.jobs import fault_switches

    env.update(fault_switches.forwarded())
    if os.environ.get("GSPO_REWARD_TIMEOUT_S"):  # the reward's time limit (rewards/guard.py)
        env["GSPO_REWARD_TIMEOUT_S"] = os.environ["GSPO_REWARD_TIMEOUT_S"]
    # GSPO_TEST_* controls (a test's own environment; no preset can set them) travel with the job, said on stderr.
    env.update(test_switches())
    if os.environ.get("GSPO_DEBUG", "") not in ("", "0", "false"):  # --debug sets it: the job's tracebacks too
        env["GSPO_DEBUG"] = "1"
    return env


def test_switches() -> dict[str, str]:
    """GSPO_TEST_* switches of this process (tests' controls that break a run on purpose; no preset can set them,
    config/schema.py): they travel with the job, and say so on stderr."""
    from gspo_cli.config.env_rule import TEST_SWITCH_PREFIX

    found = {k: v for k, v in sorted(os.environ.items()) if k.startswith(TEST_SWITCH_PREFIX)}
    if found:
        from gspo_cli.console import err

        err.print(f"test switch: {', '.join(f'{k}={v}' for k, v in found.items())} travels with the job "
                  "(a test control; unset it for a real run)", highlight=False, markup=False)
    return found


def _runtime_env(job_id: str, env_vars: dict[str, str], marked: list[str]) -> dict[str, Any]:
    from gspo_cli.jobs import secret_env

    public, secret = secret_env.split(env_vars, marked)
    secret, dropped = secret_env.drop_redacted(secret)
    if dropped:
        from gspo_cli.console import err

        err.print(f"[yellow]warning:[/] {', '.join(dropped)}: the run's saved preset holds no secret values; set "
                  "them again (--set env.vars.NAME=VALUE, or the preset) if the job needs them", highlight=False)
    return secret_env.runtime_env(public, secret_env.write(job_id, secret) if secret else None)


def submit(
    target: ClusterTarget,
    entrypoint_cmd: str,
    *,
    job_id: str,
    env_vars: dict[str, str] | None = None,
    metadata: dict[str, str] | None = None,
    label_selector: dict[str, str] | None = None,
    secret_names: list[str] | None = None,
) -> str:
    """Submit; `label_selector` places the job's driver on a node with those Ray labels (e.g. gspo-node).

    Secret variables (`jobs/secret_env.py`) travel in a private file, never in Ray's runtime_env."""
    from gspo_cli.jobs.identity import JOB_ID_VAR

    job_client = client(target)
    runtime_env = _runtime_env(job_id, env_vars or {}, secret_names or [])
    attempt, deadline = 0, time.monotonic() + AGENT_WAIT_S
    dropped: str | None = None  # the id whose submit lost its connection (it may have reached Ray)
    while attempt < 5:
        candidate = job_id if attempt == 0 else f"{job_id}-{attempt + 1}"
        # The job knows its own id (Ray does not tell it): the run lock names the job by it.
        candidate_env = {**runtime_env, "env_vars": {**runtime_env.get("env_vars", {}), JOB_ID_VAR: candidate}}
        try:
            return job_client.submit_job(
                entrypoint=entrypoint_cmd, submission_id=candidate, runtime_env=candidate_env,
                metadata={k: str(v) for k, v in (metadata or {}).items()},
                # passed only when set (a dict of one optional keyword, so mypy cannot match it to its parameter)
                **({"entrypoint_label_selector": dict(label_selector)} if label_selector else {}),  # type: ignore[arg-type]
            )
        except Exception as exc:  # noqa: BLE001 - classified below (jobs/ray_errors.py); anything else is raised
            failure = ray_errors.classify(exc)
            if failure.kind == ray_errors.AUTH:
                raise_for(exc, target, "Ray refused the job at")
            elif failure.kind == ray_errors.EXISTS and dropped == candidate:
                return candidate  # the submit whose connection dropped did reach Ray: that job is ours
            elif failure.kind == ray_errors.EXISTS:
                attempt += 1
            elif failure.retry and time.monotonic() < deadline:
                # A head that just started (or is busy) has not registered its dashboard agent yet: Ray says so
                # with a 500 and "please try again later"; it comes up within seconds.
                time.sleep(1.0)
            elif failure.kind == ray_errors.UNREACHABLE:  # a busy or just-started head dropped the connection
                if time.monotonic() >= deadline:
                    raise_for(exc, target, "cannot submit the job to")
                dropped = candidate
                time.sleep(1.0)
            else:
                raise ClusterError(f"Ray refused the job: {failure.detail[:200]}",
                                   f"dashboard: {target.dashboard_url}") from None
    raise ClusterError(f"could not find a free submission id for {job_id}", "wait a second and retry")


AGENT_WAIT_S = 60.0  # how long a submit waits for the head's job agent to register


# ------------------------------------------------------------------ the one call commands make


@dataclass(frozen=True)
class JobHandle:
    """A job on a cluster: follow it, read its status and logs, stop it."""

    target: ClusterTarget
    job_id: str

    def follow(self, *, json_out: bool = False, mode: ViewMode | None = None) -> int:
        """Stream its progress until it ends; its exit code (jobs/follow.py). `mode`: how (jobs/view_mode.py); None:
        as its metadata records, the way the command that submitted it showed it."""
        return follow_job(self.target, self.job_id, json_out=json_out, mode=mode)

    def log_file(self) -> Path | None:
        """The job's log file (Ray's job-driver log) when the head is the embedded one on this host, else None
        (a cluster's head keeps it in its own session folder: `gspo jobs logs ID` reads it from anywhere)."""
        if not self.target.embedded or (record := local_head.read_record()) is None:
            return None
        return Path(record.temp_dir) / "session_latest" / "logs" / f"job-driver-{self.job_id}.log"

    def status(self) -> dict[str, Any]:
        return _job_row(job_info(client(self.target), self.job_id, self.target))

    def logs(self) -> str:
        job_client = client(self.target)
        job_info(job_client, self.job_id, self.target)
        from gspo_cli.jobs.secret_env import scrub

        return scrub(job_client.get_job_logs(self.job_id), self.job_id)

    def stop(self, *, wait_s: float = 30.0) -> dict[str, Any]:
        job_client = client(self.target)
        info = job_info(job_client, self.job_id, self.target)
        if status_name(info) not in TERMINAL:
            job_client.stop_job(self.job_id)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline and status_name(info) not in TERMINAL:
                time.sleep(0.5)
                info = job_client.get_job_info(self.job_id)
        if status_name(info) in TERMINAL:
            from gspo_cli.jobs.secret_env import retire_job

            retire_job(self.job_id)  # a stopped job's secrets file goes (its driver may have been killed before it could)
        return _job_row(info)


def handle(job_id: str, address: str | None = None) -> JobHandle:
    """The job `job_id` on the cluster in use (never starts one)."""
    return JobHandle(resolve_target(address, start_local=False), job_id)


def submit_job(spec: JobSpec, *, address: str | None = None) -> JobHandle:
    """Submit `spec` as a Ray job on the resolved cluster (the embedded head, started with what `spec.node` asks,
    when nothing is named). The run claim is taken before anything is submitted and released if Ray never gets
    the job."""
    from gspo_cli.errors import GspoError
    from gspo_cli.jobs.request import entry_args_for
    from gspo_cli.jobs.secret_env import marked_names

    target = resolve_target(address, spec.preset, node=spec.node)
    python = _job_python(target, spec.preset)
    job_node = os.environ.get(JOB_NODE_VAR)
    claimed = submission_id(spec.job_name, spec.user_command)
    if spec.claim is not None:
        spec.claim.take(target, claimed)
    try:
        entry = entrypoint(spec.command, entry_args_for(spec.command, spec.request), python)
        job_id = submit(target, entry, job_id=claimed, env_vars=job_env(spec.env_vars),
                        secret_names=marked_names(spec.preset), metadata=spec.job_metadata(),
                        label_selector={"gspo-node": job_node} if job_node else None)
    except GspoError:
        if spec.claim is not None:
            spec.claim.refused(claimed)  # Ray never got the job: the run is free again
        raise
    if spec.claim is not None:
        spec.claim.submitted(claimed, job_id)
    return JobHandle(target, job_id)


def run_job(spec: JobSpec, *, address: str | None = None, local: bool = False, follow: bool = True,
            json_out: bool = False) -> int:
    """Run `spec` in-process (`local`: the job's own code, in this environment; `spec.env_vars` unused) or as a
    Ray job on the resolved cluster, following it (`follow`); return its exit code."""
    from gspo_cli.console import err
    from gspo_cli.jobs.request import entry_args_for

    if local:
        if spec.claim is not None:
            from gspo_cli.jobs.identity import own_job_id

            spec.claim.take(None, own_job_id())
        return _run_in_process(spec.command, entry_args_for(spec.command, spec.request), json_out=json_out)
    job = submit_job(spec, address=address)
    err.print(f"Submitted {spec.label} [bold]{job.job_id}[/] to {job.target.dashboard_url} (from {job.target.source}).")
    if spec.held_output and follow:
        log_file = job.log_file()
        err.print(f"Job log ({spec.held_output}): gspo jobs logs {quote(job.job_id)} --raw"
                  + (f", or {log_file}" if log_file else ""), markup=False, highlight=False)
    if not follow:
        if json_out:
            from gspo_cli.console import print_json

            print_json({"job_id": job.job_id, "dashboard_url": job.target.dashboard_url,
                        **({"run": spec.run} if spec.run else {})})
        err.print(f"Follow it with: gspo jobs logs {quote(job.job_id)} --follow", markup=False)
        return 0
    return job.follow(json_out=json_out, mode=spec.view)


def _job_python(target: ClusterTarget, preset: Preset | None) -> str:
    """This interpreter for a head on this machine; the preset's `cluster.python` (default python3) elsewhere."""
    host = target.dashboard_url.split("://", 1)[-1].rsplit(":", 1)[0]
    if target.embedded or host in ("127.0.0.1", "localhost", "::1", "[::1]"):
        return sys.executable
    return getattr(getattr(preset, "cluster", None), "python", None) or "python3"


def _run_in_process(command: str, entry_args: list[str], *, json_out: bool) -> int:
    import contextlib

    from gspo_cli.console import print_json
    from gspo_cli.jobs import events
    from gspo_cli.jobs.entry import run_in_process
    from gspo_cli.jobs.view import JobView

    view = JobView(title=command)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    previous = events.set_sink(view.handle_event)
    try:
        # Job code may print; in-process that would corrupt --json on stdout, so it goes to stderr.
        with view, contextlib.redirect_stdout(sys.stderr):
            code = run_in_process(command, entry_args)
    finally:
        events.set_sink(previous)
    if json_out and view.result is not None:
        print_json(view.result)
    return code


# ------------------------------------------------------------------ jobs list / status / logs / stop


def _job_row(info) -> dict[str, Any]:
    def ts(ms):
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) if ms else None

    return {
        "job_id": info.submission_id or info.job_id,
        "status": status_name(info),
        "entrypoint": info.entrypoint,
        "start_time": ts(info.start_time),
        "end_time": ts(info.end_time),
        "exit_code": getattr(info, "driver_exit_code", None),
        "message": (info.message or "").strip()[:300],
        "metadata": dict(info.metadata or {}),
        "run": (info.metadata or {}).get("run"),
    }


def connect_in_process(address: str | None = None) -> ClusterTarget:
    """Point this process's Ray driver (a job run with --local) at the resolved cluster, with its token.

    Sets RAY_ADDRESS to the cluster's GCS address so `ray.init` cannot attach to another cluster on this host.
    """
    target = resolve_target(address, start_local=False)
    if not target.address:
        raise ClusterError(f"{target.dashboard_url} (from {target.source}) names a dashboard, not the GCS address a "
                           "driver in this process connects to", "pass --address HEAD:6379 (the GCS port)", exit_code=2)
    target.use_auth()
    os.environ["RAY_ADDRESS"] = target.address
    return target


def list_jobs(address: str | None = None) -> list[dict[str, Any]]:
    target = resolve_target(address, start_local=False)
    job_client = client(target)
    try:
        infos = job_client.list_jobs()
    except (RuntimeError, OSError) as exc:  # the SDK raises RuntimeError for any non-200
        raise_for(exc, target, "cannot list the jobs of")
    except Exception as exc:  # an answer that is not the jobs API's (JSON, schema)
        from gspo_cli.jobs.follow import not_ray

        raise not_ray(target, exc) from None
    rows = [_job_row(info) for info in infos]
    return sorted(rows, key=lambda r: r["start_time"] or "", reverse=True)


def job_status(job_id: str, address: str | None = None) -> dict[str, Any]:
    return handle(job_id, address).status()


def job_logs(job_id: str, address: str | None = None) -> tuple[str, ViewMode]:
    job = handle(job_id, address)  # its log so far, and how its metadata says to show it
    return job.logs(), ViewMode.from_metadata(job.status()["metadata"])


def follow_existing(job_id: str, address: str | None = None, *, json_out: bool = False, raw: bool = False) -> int:
    return handle(job_id, address).follow(json_out=json_out, mode=RAW if raw else None)


def stop_job(job_id: str, address: str | None = None, *, wait_s: float = 30.0) -> dict[str, Any]:
    return handle(job_id, address).stop(wait_s=wait_s)


def cluster_status(address: str | None = None, *, with_actors: bool = False) -> dict[str, Any]:
    """The cluster in use: alive nodes and their resources summed, the nodes Ray has lost, and (`with_actors`)
    which actor runs on which node."""
    from gspo_cli.jobs import nodestate, placement

    target = resolve_target(address, start_local=False)
    client(target)  # reachability and token check with a clean error
    rows = nodestate.list_all(target)
    alive, dead = nodestate.split(rows)
    total: dict[str, float] = {}
    for node in alive:
        for key, value in node["resources"].items():
            if not key.startswith("node:"):
                total[key] = total.get(key, 0) + float(value)
    record = local_head.read_record() if target.embedded else None
    return {
        "dashboard_url": target.dashboard_url,
        "address": target.address,
        "source": target.source,
        "embedded": target.embedded,
        "embedded_pid": record.pid if record else None,
        # what its ports listen on (jobs/loopback.py): a head of an older gspo binds every interface, token-guarded
        "embedded_binds": (("127.0.0.1 only" if record.local_only else "every interface (token-guarded; "
                            "`gspo cluster down` and a new head bind 127.0.0.1 only)") if record else None),
        "auth": target.auth or os.environ.get("RAY_AUTH_MODE", "disabled"),
        "nodes": alive,
        "dead_nodes": dead,
        "resources": total,
        **({"actors": placement.actors(target, {r["node_id"]: r["name"] for r in rows})} if with_actors else {}),
    }

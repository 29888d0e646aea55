"""The Ray job layer: every long-running gspo command runs as a Ray job through here.

Address resolution: `--address` > preset `cluster.address` > `RAY_ADDRESS` > the embedded local head
(`local_head.py`). An address is a dashboard URL (`http://host:8265`) or a GCS address (`host:6379`, whose
dashboard is assumed at port 8265 of that host).

`run_job` is what commands call: it runs `python -m gspo_cli.jobs.entry COMMAND ARGS...` either in-process
(`local=True`) or as a Ray job, renders its progress events (`job_view.py`) and returns its exit code.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
from dataclasses import dataclass
from typing import Any

from gspo_cli import __version__
from gspo_cli.errors import ClusterError
from gspo_cli.jobs import local_head

TERMINAL = {"SUCCEEDED", "FAILED", "STOPPED"}
DEFAULT_DASHBOARD_PORT = 8265
LOG_TAIL_LINES = 25


@dataclass
class ClusterTarget:
    dashboard_url: str
    address: str | None  # GCS address when known
    embedded: bool
    source: str  # where the address came from: --address, preset, RAY_ADDRESS, embedded


def _dashboard_url(address: str) -> str:
    if address.startswith(("http://", "https://")):
        return address.rstrip("/")
    if address.startswith("ray://"):
        raise ClusterError(
            f"address {address!r} is a Ray Client address; gspo submits jobs through the dashboard",
            "pass the dashboard URL (http://HEAD:8265) or the GCS address (HEAD:6379)",
            exit_code=2,
        )
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return f"http://{host}:{DEFAULT_DASHBOARD_PORT}"


def resolve_target(address: str | None = None, preset: Any = None, *, start_local: bool = True) -> ClusterTarget:
    """Which Ray cluster to use; starts the embedded head only when nothing is named and start_local is set."""
    named = [
        (address, "--address"),
        (getattr(getattr(preset, "cluster", None), "address", None), "preset cluster.address"),
        (os.environ.get("RAY_ADDRESS"), "RAY_ADDRESS"),
    ]
    for value, source in named:
        if value and value != "local":
            gcs = None if value.startswith(("http://", "https://")) else value
            return ClusterTarget(_dashboard_url(value), gcs, embedded=False, source=source)
    local_head.client_env()
    record = local_head.running()
    if record is None:
        if not start_local:
            raise ClusterError(
                "no Ray cluster: no --address, no RAY_ADDRESS and no embedded head running",
                "run a command that starts one (gspo train --preset tiny), `gspo cluster up`, or pass --address",
            )
        from gspo_cli.console import err

        err.print("[dim]Starting the embedded local Ray head on 127.0.0.1 (once; reused by later commands)...[/]")
        record = local_head.start()
    return ClusterTarget(record.dashboard_url, record.address, embedded=True, source="embedded")


def client(target: ClusterTarget):
    """A JobSubmissionClient for the target, with a clean error when it cannot be reached."""
    import logging

    from ray.job_submission import JobSubmissionClient

    # The SDK logs every websocket close at INFO; that is noise between our own progress lines.
    logging.getLogger("ray.dashboard.modules.job.sdk").setLevel(logging.WARNING)
    if target.embedded:
        local_head.client_env()
    try:
        return JobSubmissionClient(target.dashboard_url)
    except Exception as exc:  # ConnectionError, RuntimeError: Ray raises several kinds here
        raise ClusterError(
            f"cannot reach Ray at {target.dashboard_url} (from {target.source}): {_first_line(exc)}",
            "start a cluster (`gspo cluster up` on the head, or `ray start --head`), fix the address, "
            "or drop --address/RAY_ADDRESS to use the embedded local head",
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


# ------------------------------------------------------------------ submit


def submission_id(preset_name: str, command: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{preset_name or 'gspo'}-{command}")
    return f"{safe}-{stamp}"


def entrypoint(command: str, entry_args: list[str], python: str) -> str:
    return " ".join(shlex.quote(p) for p in [python, "-u", "-m", "gspo_cli.jobs.entry", command, *entry_args])


def job_env(preset: Any) -> dict[str, str]:
    """Environment for the job: the preset's exports (as `gspo env exports` fits them: one rule, obsolete variables
    dropped, keys verl sets itself refused) plus what gspo itself needs."""
    from gspo_cli import layout

    env: dict[str, str] = {}
    if getattr(preset, "env", None) is not None:
        from gspo_cli.env.exports import job_env as fitted_env

        env.update(fitted_env(preset).job_env())
    env["GSPO_HOME"] = str(layout.gspo_home())
    env.setdefault("PYTHONUNBUFFERED", "1")
    # Our jobs report progress as events; tqdm bars of transformers/huggingface_hub would only clutter the log.
    env.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    # Fault injection for tests of run health (gspo_cli/engines/native/faults.py) travels with the job.
    if os.environ.get("GSPO_FAULT"):
        env["GSPO_FAULT"] = os.environ["GSPO_FAULT"]
    return env


def submit(
    target: ClusterTarget,
    entrypoint_cmd: str,
    *,
    job_id: str,
    env_vars: dict[str, str] | None = None,
    metadata: dict[str, str] | None = None,
) -> str:
    job_client = client(target)
    runtime_env = {"env_vars": dict(env_vars or {})}
    for attempt in range(5):
        candidate = job_id if attempt == 0 else f"{job_id}-{attempt + 1}"
        try:
            return job_client.submit_job(
                entrypoint=entrypoint_cmd, submission_id=candidate, runtime_env=runtime_env,
                metadata={k: str(v) for k, v in (metadata or {}).items()},
            )
        except RuntimeError as exc:
            if "already exists" not in str(exc):
                raise ClusterError(f"Ray refused the job: {_first_line(exc)}", f"dashboard: {target.dashboard_url}") from None
    raise ClusterError(f"could not find a free submission id for {job_id}", "wait a second and retry")


# ------------------------------------------------------------------ follow


def follow_job(target: ClusterTarget, job_id: str, *, json_out: bool = False, quiet: bool = False) -> int:
    """Stream a job's logs, render its events, and return an exit code reflecting its final status."""
    import asyncio

    from gspo_cli.console import err
    from gspo_cli.jobs.view import JobView

    job_client = client(target)
    _job_info(job_client, job_id, target)  # unknown id -> clean error before streaming
    view = JobView(title=job_id, quiet=quiet)

    async def _tail() -> None:
        async for chunk in job_client.tail_job_logs(job_id):
            view.feed(chunk)

    try:
        with view:
            asyncio.run(_tail())
            view.flush()
            info = _wait_terminal(job_client, job_id)
    except KeyboardInterrupt:
        err.print(
            f"\nDetached from job {job_id}; it keeps running.\n"
            f"  reattach: gspo jobs logs {job_id} --follow\n"
            f"  stop:     gspo jobs stop {job_id}"
        )
        return 130
    return _finish(info, job_id, view, job_client, json_out=json_out)


def _wait_terminal(job_client, job_id: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    info = job_client.get_job_info(job_id)
    while str(info.status) not in TERMINAL and time.monotonic() < deadline:
        time.sleep(0.5)
        info = job_client.get_job_info(job_id)
    return info


def _status_name(info) -> str:
    status = info.status
    return getattr(status, "value", str(status))


def _finish(info, job_id: str, view, job_client, *, json_out: bool) -> int:
    from gspo_cli.console import err, print_json

    status = _status_name(info)
    exit_code = getattr(info, "driver_exit_code", None)
    if status == "SUCCEEDED":
        if json_out and view.result is not None:
            print_json(view.result)
        err.print(f"[green]Job {job_id} succeeded.[/]")
        return 0
    from gspo_cli.jobs.view import plain_line

    # Events as the text they stand for (progress lines dropped: the bar showed them), so the tail reads as a log.
    shown = [text for line in job_client.get_job_logs(job_id).splitlines() if (text := plain_line(line)) is not None]
    tail = "\n".join(shown[-LOG_TAIL_LINES:])
    err.print(f"[red]Job {job_id} {status.lower()}[/]" + (f" (exit code {exit_code})" if exit_code else "") + ".")
    if info.message:
        err.print(f"[dim]Ray: {info.message.strip().splitlines()[-1][:300]}[/]")
    if tail:
        err.print(f"[dim]Last {LOG_TAIL_LINES} log lines:[/]")
        err.print(tail, markup=False, highlight=False)
    err.print(f"Full log: gspo jobs logs {job_id}")
    if status == "STOPPED":
        return 1
    return exit_code if isinstance(exit_code, int) and exit_code > 0 else 1


def _job_info(job_client, job_id: str, target: ClusterTarget):
    try:
        return job_client.get_job_info(job_id)
    except RuntimeError as exc:
        if "does not exist" in str(exc) or "404" in str(exc):
            raise ClusterError(
                f"no job with id {job_id!r} on {target.dashboard_url}", "list jobs with `gspo jobs list`"
            ) from None
        raise ClusterError(f"cannot read job {job_id!r}: {_first_line(exc)}") from None


# ------------------------------------------------------------------ the one call commands make


def run_job(
    command: str,
    request: dict[str, Any] | str | os.PathLike | list[str] | None,
    *,
    preset: Any = None,
    preset_name: str | None = None,
    address: str | None = None,
    local: bool = False,
    json_out: bool = False,
    follow: bool = True,
) -> int:
    """Run a job command in-process (`local`) or as a Ray job on the resolved cluster; return its exit code.

    `request` is what the job is asked to do: a dict is written as its request file (`jobs.request`), a path
    names one already written; the job receives that one path. (A list is passed as raw arguments.)
    """
    name = preset_name or getattr(preset, "name", "") or "gspo"
    from gspo_cli.jobs.request import entry_args_for

    entry_args = entry_args_for(command, request)
    if local:
        return _run_in_process(command, entry_args, json_out=json_out)
    target = resolve_target(address, preset)
    python = _job_python(target, preset)
    job_id = submit(
        target, entrypoint(command, entry_args, python),
        job_id=submission_id(name, command),
        env_vars=job_env(preset),
        metadata={"gspo_version": __version__, "preset": name, "command": command},
    )
    from gspo_cli.console import err

    err.print(f"Submitted job [bold]{job_id}[/] to {target.dashboard_url} ({target.source}).")
    if not follow:
        if json_out:
            from gspo_cli.console import print_json

            print_json({"job_id": job_id, "dashboard_url": target.dashboard_url})
        err.print(f"Follow it with: gspo jobs logs {job_id} --follow")
        return 0
    return follow_job(target, job_id, json_out=json_out)


def _job_python(target: ClusterTarget, preset: Any) -> str:
    """This interpreter for a head on this machine; the preset's `cluster.python` (default python3) elsewhere."""
    host = target.dashboard_url.split("://", 1)[-1].rsplit(":", 1)[0]
    if target.embedded or host in ("127.0.0.1", "localhost", "::1", "[::1]"):
        return sys.executable
    return getattr(getattr(preset, "cluster", None), "python", None) or "python3"


def _run_in_process(command: str, entry_args: list[str], *, json_out: bool) -> int:
    import contextlib

    from gspo_cli.console import print_json
    from gspo_cli.jobs import entry as jobs_entry
    from gspo_cli.jobs import events
    from gspo_cli.jobs.view import JobView

    view = JobView(title=command)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    previous = events.set_sink(view.handle_event)
    try:
        # Job code may print; in-process that would corrupt --json on stdout, so it goes to stderr.
        with view, contextlib.redirect_stdout(sys.stderr):
            code = jobs_entry.run(command, entry_args)
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
        "status": _status_name(info),
        "entrypoint": info.entrypoint,
        "start_time": ts(info.start_time),
        "end_time": ts(info.end_time),
        "exit_code": getattr(info, "driver_exit_code", None),
        "message": (info.message or "").strip()[:300],
        "metadata": dict(info.metadata or {}),
    }


def list_jobs(address: str | None = None) -> list[dict[str, Any]]:
    target = resolve_target(address, start_local=False)
    rows = [_job_row(info) for info in client(target).list_jobs()]
    return sorted(rows, key=lambda r: r["start_time"] or "", reverse=True)


def job_status(job_id: str, address: str | None = None) -> dict[str, Any]:
    target = resolve_target(address, start_local=False)
    return _job_row(_job_info(client(target), job_id, target))


def job_logs(job_id: str, address: str | None = None) -> str:
    target = resolve_target(address, start_local=False)
    job_client = client(target)
    _job_info(job_client, job_id, target)
    return job_client.get_job_logs(job_id)


def follow_existing(job_id: str, address: str | None = None, *, json_out: bool = False) -> int:
    target = resolve_target(address, start_local=False)
    return follow_job(target, job_id, json_out=json_out)


def stop_job(job_id: str, address: str | None = None, *, wait_s: float = 30.0) -> dict[str, Any]:
    target = resolve_target(address, start_local=False)
    job_client = client(target)
    info = _job_info(job_client, job_id, target)
    if _status_name(info) not in TERMINAL:
        job_client.stop_job(job_id)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and _status_name(info) not in TERMINAL:
            time.sleep(0.5)
            info = job_client.get_job_info(job_id)
    return _job_row(info)


def cluster_status(address: str | None = None) -> dict[str, Any]:
    """The cluster in use and its resources (alive nodes summed), without connecting a driver."""
    target = resolve_target(address, start_local=False)
    client(target)  # reachability check with a clean error
    from ray.util.state import list_nodes

    try:
        nodes = list_nodes(address=target.dashboard_url, detail=True, raise_on_missing_output=False)
    except Exception as exc:
        raise ClusterError(f"cannot list nodes at {target.dashboard_url}: {_first_line(exc)}") from None
    total: dict[str, float] = {}
    alive = []
    for node in nodes:
        state = getattr(node, "state", None)
        if str(state) != "ALIVE":
            continue
        alive.append({"node_ip": node.node_ip, "is_head": bool(node.is_head_node),
                      "resources": dict(node.resources_total or {})})
        for key, value in (node.resources_total or {}).items():
            if not key.startswith("node:"):
                total[key] = total.get(key, 0) + float(value)
    record = local_head.read_record() if target.embedded else None
    return {
        "dashboard_url": target.dashboard_url,
        "address": target.address,
        "source": target.source,
        "embedded": target.embedded,
        "embedded_pid": record.pid if record else None,
        "nodes": alive,
        "resources": total,
    }

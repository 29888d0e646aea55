"""What a gspo job is, as one value: `JobSpec` (what `jobs.client.run_job` / `submit_job` take), and the run
lock's side of a job's lifecycle (`RunClaim`, implemented by runs/lock.py `LockClaim`).

A spec says which job kind runs with which request, for which preset and run, in which environment, and what the
embedded head must offer it (its engine's answer); how and where it runs (`--local`, `--address`, follow or
not) are arguments of the call, not of the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from gspo_cli import __version__
from gspo_cli.jobs.view_mode import ViewMode

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset
    from gspo_cli.jobs.request import JobRequest
    from gspo_cli.jobs.resources import NodeResources
    from gspo_cli.jobs.target import ClusterTarget


class RunClaim(Protocol):
    """A job that writes a run holds the run's lock (runs/lock.py): taken before anything is submitted, renamed
    when Ray took another id, released when Ray never got the job."""

    def take(self, target: ClusterTarget | None, job_id: str) -> None: ...  # target None: in this process

    def submitted(self, claimed: str, actual: str) -> None: ...

    def refused(self, claimed: str) -> None: ...


@dataclass
class JobSpec:
    """One gspo job. `request`: a dict is written as its request file (`jobs.request`), a path names one already
    written, a list is passed as raw arguments, a callable gives the arguments once the run is claimed."""

    command: str  # a registered job kind (gspo_cli/job_kinds.py)
    request: JobRequest = None
    preset: Preset | None = None
    name: str | None = None  # names the job `<name>-<command>-<time>` (default: the run, else the preset's name)
    run: str | None = None  # the run the job writes (its metadata, and the job's name)
    env_vars: Mapping[str, str] | None = None  # the job's environment beyond gspo's own (env/exports.job_vars)
    node: NodeResources | None = None  # what the embedded head must offer it (engines.node_resources)
    claim: RunClaim | None = None
    # the gspo command the job serves when it is not the kind's name (verl-train serves `gspo train`): in the job
    # id and the metadata
    serves: str | None = None
    label: str = "job"  # in messages: "Submitted verl job ..."
    metadata: dict[str, str] = field(default_factory=dict)  # more metadata (engine, ...)
    # What the job's own output is ("verl's and vLLM's output"), when the follower holds it back: it stays in the
    # job log (`gspo jobs logs ID --raw`), one line says so, and a failure shows the log lines that say why. None: the
    # follower streams it.
    held_output: str | None = None
    step_lines: bool = False  # progress as one line per step (jobs/steps.py) instead of a bar

    @property
    def view(self) -> ViewMode:
        """How its log is shown, while it runs and when read back (`gspo jobs logs`): recorded in its metadata."""
        return ViewMode(quiet=bool(self.held_output), step_lines=self.step_lines)

    @property
    def job_name(self) -> str:
        return self.run or self.name or getattr(self.preset, "name", "") or "gspo"

    @property
    def user_command(self) -> str:
        return self.serves or self.command

    def job_metadata(self) -> dict[str, str]:
        return {"gspo_version": __version__, "preset": self.name or getattr(self.preset, "name", "") or "gspo",
                "command": self.user_command, **({"run": self.run} if self.run else {}), **self.view.metadata(),
                **self.metadata}

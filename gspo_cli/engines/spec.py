"""The engine spec: what gspo asks of a training engine's implementation, answered in one place per engine.

Every fact of an engine that is data (its name, the keys it runs / ignores, its planner hooks, its job kinds) is
its entry in config/engine_registry.py. That entry names its implementation, an `EngineSpec` subclass
(engines/native/spec.py, engines/verl/spec.py), which engines/__init__.py builds around it into `ENGINES`
(the registry pattern of gspo_cli/registry.py). Every other layer asks the spec or the entry (or, below the
engines, is handed the spec's answer or reads it from the job file) instead of comparing engine or device names
(tests/test_engine_names.py keeps that at 0 outside engines/ and config/):

| question                                   | answered by                                   | asked by |
|--------------------------------------------|-----------------------------------------------|----------|
| which device its job runs on (`auto`)      | `device(preset)` (config/devices.py's rule)   | launch (once; recorded in the job file) |
| what it asks the cluster for               | `cluster_need(preset)`: Ray resource, nodes x slots, bundle, placement | the job file -> the job wrapper's capacity check (jobs/capacity.py) |
| what a head / node start must offer        | `node_resources(preset)`                      | the embedded head (jobs/target.py), `cluster up/join` (env/raystart.py) |
| the environment it needs where its job runs | `environment(preset, python=)`: probed in a subprocess of the job's interpreter | `gspo train` (first), its dry-run, `env doctor --preset` |
| how a `gspo train` request runs            | `launcher()`                                  | cli/train.py |

Cheap to import: no torch, Ray or verl (a launcher is loaded only when asked for).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gspo_cli.jobs.resources import NodeResources

if TYPE_CHECKING:
    from gspo_cli.config.devices import Resolved
    from gspo_cli.config.engine_registry import Engine
    from gspo_cli.config.schema import Preset
    from gspo_cli.engines.request import Launcher
    from gspo_cli.jobs.capacity import Need


# env/stack_probe.probe_needs's signature: (python, *, dists, modules, exports) -> facts
Probe = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Missing:
    """Something the engine needs on this host that is not there, and the exact fix."""

    what: str
    why: str
    fix: str
    dist: str = ""  # the distribution it is, when it is one (`env doctor` leaves out what its stack rows judge)

    def to_json(self) -> dict[str, str]:
        return {"what": self.what, "why": self.why, "fix": self.fix, "dist": self.dist}


@dataclass(frozen=True)
class Environment:
    """What a job of a preset needs of the interpreter it runs with, and what that interpreter lacks.

    `needs` names the environment in words (for verl on a CPU: the engine venv and what it holds), `fix` is the one
    command that gets all of it. `python` is the interpreter probed, None when the job runs on a named cluster
    (its nodes' interpreters are `gspo env doctor --cluster`'s). `blocking`: the job runs with `python` on this
    host, so a missing piece stops `gspo train` before anything is submitted and makes the dry-run not launchable;
    otherwise (an accelerator preset judged on another host) the dry-run only says it. `checked_on`: where and how
    it is judged instead, when this host has none of the preset's devices (a laptop dry-running a cluster preset):
    then what this interpreter lacks is no gap of the run and gets no fix to run here."""

    engine: str
    needs: str
    fix: str
    python: str | None
    missing: tuple[Missing, ...] = ()
    blocking: bool = False
    seconds: float = 0.0
    checked_on: str = ""

    @property
    def ok(self) -> bool:
        return not self.missing

    @property
    def blocks(self) -> bool:
        return self.blocking and not self.ok

    def short(self) -> str:
        """What is needed and what `python` lacks, without the reasons (an error line; `line` has them)."""
        return f"needs {self.needs}; {self.python} lacks {', '.join(m.what for m in self.missing)}"

    def line(self) -> str:
        """One line: what is needed, whether `python` has it, and the fix."""
        if self.python is None:
            return (f"needs {self.needs}; not checked here: the job runs on the named cluster (check its nodes: "
                    "gspo env doctor --preset P --cluster)")
        if self.ok:
            return f"needs {self.needs}: all there ({self.python})"
        if self.checked_on and not self.blocking:
            return (f"needs {self.needs}; checked on {self.checked_on}, not on this host (this host's Python lacks "
                    f"{', '.join(m.what for m in self.missing)}: not needed here, not an error of the run)")
        lacks = "; ".join(f"{m.what} ({m.why})" for m in self.missing)
        return f"needs {self.needs}; {self.python} lacks {lacks}; fix: {self.fix}"

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "needs": self.needs, "python": self.python, "ok": self.ok,
                "blocking": self.blocking, "missing": [m.to_json() for m in self.missing], "fix": self.fix,
                "line": self.line(), "seconds": self.seconds, "checked_on": self.checked_on or None}


@dataclass(frozen=True)
class EngineSpec:
    """An engine's implementation around its registry entry. Subclasses answer the questions in the module table."""

    entry: Engine

    @property
    def name(self) -> str:
        return self.entry.name

    def launcher(self) -> Launcher:
        """`gspo train` for this engine: `(req: TrainRequest) -> int`, imported only now."""
        raise NotImplementedError

    def device(self, preset: Preset) -> Resolved | None:
        """The device kind the job runs on as resolved on this host (None: decided inside the job)."""
        return None

    def cluster_need(self, preset: Preset) -> Need | None:
        """What a job of `preset` (its device resolved) needs from the cluster: None when it places no groups."""
        return None

    def node_resources(self, preset: Preset | None) -> NodeResources:
        """What a Ray node that runs this engine's jobs of `preset` must offer beyond its counted devices."""
        return NodeResources()

    def environment(self, preset: Preset, *, python: str | None = "", probe: Probe | None = None) -> Environment:
        """What the job of `preset` needs of the interpreter it runs with (`python`; "": this one, `sys.executable`;
        None: a named cluster's, not probed), probed in a subprocess of it (`probe`: env.stack_probe.probe_needs)."""
        return Environment(self.name, "nothing beyond gspo", "", python=None if python is None else
                           (python or sys.executable))

    def required_environment(self, preset: Preset, *, python: str | None = "", probe: Probe | None = None
                             ) -> list[Missing]:
        """What this host lacks to run the job of `preset` (empty: nothing), each with the fix command."""
        return list(self.environment(preset, python=python, probe=probe).missing)

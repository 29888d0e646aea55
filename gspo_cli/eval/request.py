"""What `gspo eval` was asked, and how it reaches its job: a JSON request file (jobs/request.py), as every job.

The CLI fills an `EvalRequest` from its flags and writes it into the output folder (`request.json`; several
checkpoints: under $GSPO_HOME/jobs/); the job (`python -m gspo_cli.job_kinds eval REQUEST.json`) reads it
back, so a Ray job and a `--local` run execute the same request. Settings flags are None unless given: the preset's `eval.benchmarks.<name>` (schema) holds
every default.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from gspo_cli.errors import ConfigError

JOB_COMMAND = "eval"
REQUEST_FILE = "request.json"
# EvalRequest fields that override eval.benchmarks.<name> (the schema's EvalBenchmark fields, checked in tests)
SETTING_FLAGS = ("n", "k", "temperature", "top_p", "top_k", "max_tokens", "prompt_style", "enable_thinking", "data",
                 "batch_size", "seed")


@dataclass
class EvalRequest:
    # one benchmark, or several separated by commas (`aime2024,aime2025,amc2023`): one job, one engine per model
    benchmark: str
    model: str = "latest"
    preset: str | None = None
    sets: list[str] = field(default_factory=list)
    # settings flags; None = the preset's (or the schema's) value
    n: int | None = None
    k: list[int] | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int | None = None
    prompt_style: str | None = None
    enable_thinking: bool | None = None
    data: str | None = None
    batch_size: int | None = None
    seed: int | None = None
    # execution; None = the preset's eval.backend, cluster.device, rollout.tensor_parallel_size
    backend: str | None = None
    device: str | None = None
    tp: int | None = None
    limit: int | None = None  # first N problems only (smoke tests)
    out: str | None = None
    score_workers: int | None = None  # None = the batch pool's default; 0 = in-process
    trust_remote_code: bool = False  # --trust-remote-code: the user's own word (a run folder's config never says it)
    force: bool = False  # --force: the job evaluates again what is already evaluated with the same settings
    # the time in the folder name of a model that is not a run's checkpoint ($GSPO_HOME/evals/<model>-<bench>-<stamp>),
    # fixed by the CLI so it finds what the job wrote; None: the time the folder is named
    stamp: str | None = None

    def __post_init__(self) -> None:
        # a benchmark names the results folder (runs/<run>/eval/<benchmark>-<step>-<digest>) and, without
        # --data, the prepared data's folder: the one checked rule for names that become paths
        from gspo_cli.layout import path_component

        names = self.names()
        for name in names:
            path_component(name, "benchmark name", "a benchmark is a plain name, e.g. aime2024 or arith "
                           "(with --data PATH for another parquet); several: aime2024,aime2025,amc2023")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"benchmark {twice[0]!r} is named twice in {self.benchmark!r}",
                              "name each benchmark once: aime2024,aime2025,amc2023")
        if len(names) > 1 and (self.data or self.out):
            flag = "--data" if self.data else "--out"
            raise ConfigError(f"{flag} names one file or folder but {self.benchmark!r} names {len(names)} "
                              "benchmarks", f"evaluate one benchmark with {flag}, or drop {flag}")

    def names(self) -> list[str]:
        """The benchmarks of the request, in the order given."""
        return [part.strip() for part in self.benchmark.split(",")]

    def one(self, name: str) -> EvalRequest:
        """The request of one of its benchmarks (what the folder, settings and results of that benchmark use)."""
        return replace(self, benchmark=name)

    def flags(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SETTING_FLAGS}


def trusts_remote_code(req: EvalRequest, preset=None) -> bool:
    """Whether the model's own code may run: `--trust-remote-code`, or the user's own preset (a run folder's
    saved config never turns it on: config/run_config.py)."""
    return bool(req.trust_remote_code or (preset is not None and preset.model.trust_remote_code))


def _absolute(value: str | None, *, must_exist: bool = False) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    if must_exist and not path.exists():
        return value  # not a path: a run name, `latest`, `builtin:tiny`, a preset name
    return str(path.resolve())


def portable(req: EvalRequest) -> EvalRequest:
    """Paths made absolute: a Ray job runs in another working directory than the CLI."""
    return replace(req, model=_absolute(req.model, must_exist=True), preset=_absolute(req.preset, must_exist=True),
                   data=_absolute(req.data), out=_absolute(req.out))


def payload(req: EvalRequest) -> dict[str, Any]:
    """The request file's content (jobs/request.py adds the command)."""
    return asdict(portable(req))


def write_request(req: EvalRequest, path: Path | None = None) -> Path:
    """The request file (at `path`, else a new file under $GSPO_HOME/jobs/)."""
    from gspo_cli.jobs import request as job_request

    return job_request.write(JOB_COMMAND, payload(req), path)


def request_from(data: dict[str, Any]) -> EvalRequest:
    """An EvalRequest from a request file's content; unknown fields are an error (a file from another version)."""
    data = {k: v for k, v in data.items() if k != "command"}
    unknown = sorted(set(data) - {f.name for f in fields(EvalRequest)})
    try:
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}")
        return EvalRequest(**data)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"not a valid eval request: {exc}", "the file is written by `gspo eval`; rerun it") from None


def read_request(path: str | Path) -> EvalRequest:
    from gspo_cli.jobs import request as job_request

    return request_from(job_request.read([str(path)], JOB_COMMAND))

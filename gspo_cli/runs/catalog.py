"""What each run under $GSPO_HOME/runs holds, read from its files only (no Ray, no torch): `gspo runs list|show`.

A run's status comes from the job's own record (`job_state.json`, see `state`) when there is one, else from
the files: all steps logged = finished, fewer = incomplete.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gspo_cli import layout, untrusted
from gspo_cli.errors import ConfigError
from gspo_cli.metrics import names
from gspo_cli.metrics.health import HEALTH_FILE  # written by the job wrapper; format in docs/health.md
from gspo_cli.metrics.jsonl import describe_order_problems, order_problems
from gspo_cli.runs import state
from gspo_cli.shell import quote

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


def load_config(run: Path) -> dict[str, Any]:
    """A run's saved preset (config.yaml), read with the YAML limits (a run folder may come from someone else)."""
    import yaml

    from gspo_cli.config import yaml_limits

    path = run / "config.yaml"
    try:
        data = yaml_limits.load(untrusted.read_text(path), str(path))
    except (OSError, ValueError, yaml.YAMLError, ConfigError) as exc:
        if isinstance(exc, (yaml.YAMLError, ConfigError)):
            untrusted.note(path, f"{path}: not read ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
        return {}
    return data if isinstance(data, dict) else {}


def read_health(run: Path) -> list[dict[str, Any]]:
    """Health events of the run (absent file: none); malformed lines are skipped. Format: docs/health.md."""
    from gspo_cli.metrics.health import read_events

    return read_events(run / HEALTH_FILE)


def total_steps(run: Path, config: dict[str, Any]) -> int | None:
    trainer = _section(config, "trainer")
    spec = untrusted.read_mapping(run / "verl_job.json")  # the verl launch records the computed total
    total = (spec or {}).get("total_steps") or trainer.get("total_training_steps")
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def read_evals(run: Path) -> list[dict[str, Any]]:
    """Finished evals (results.json present) as small rows, sorted by (benchmark, step, when written): of two evals
    of one step (other settings or data) the newer is last, the one `runs list` shows."""
    rows = []
    for path in sorted((run / "eval").glob("*/results.json")):
        res = untrusted.read_mapping(path)
        if res is None:
            continue
        m, s = res.get("metrics") or {}, res.get("settings") or {}
        rows.append({"benchmark": res.get("benchmark"), "step": (res.get("model") or {}).get("step"),
                     "accuracy": res.get("accuracy"), "n": m.get("n"), "dir": str(path.parent),
                     "device": s.get("device"), "settings": sampling_text(s), "created": str(res.get("created") or ""),
                     "problems": (res.get("data") or {}).get("problems"),
                     "data_sha256": s.get("data_sha256") or None})
    return sorted(rows, key=lambda r: (str(r["benchmark"]), r["step"] if r["step"] is not None else -1, r["created"]))


def sampling_text(s: dict[str, Any]) -> str:
    """What tells two evals of one step apart: `T=1.0 top_p=1.0 max 8 tok` (+ limit, prompt style when set)."""
    parts = [f"T={s.get('temperature')}", f"top_p={s.get('top_p')}", f"max {s.get('max_tokens')} tok"]
    if s.get("data_sha256"):
        parts.append(f"data {s['data_sha256'][:8]}")
    if s.get("limit"):
        parts.append(f"limit {s['limit']}")
    if s.get("prompt_style"):
        parts.append(f"prompt {s['prompt_style']}")
    return " ".join(parts)


def _du(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def _metrics_summary(run: Path) -> dict[str, Any]:
    from gspo_cli.metrics.jsonl import read_series

    series = read_series(layout.metrics_file(run))
    steps = sorted({s for pts in series.values() for s, _ in pts})
    reward = series.get(names.REWARD) or []
    best: dict[str, Any] | None = None
    for key in names.val_keys(series):
        step, value = max(series[key], key=lambda p: p[1])
        if best is None or value > best["value"]:
            best = {"value": value, "step": step, "key": key}
    wall = sum(v for _, v in series.get(names.STEP_TIME, []))
    return {"steps_done": steps[-1] if steps else 0, "last_reward": reward[-1][1] if reward else None,
            "best_val": best, "train_time_s": round(wall, 1) if wall else None}


def status_of(run: Path, steps_done: int, total: int | None) -> dict[str, Any]:
    from gspo_cli.runs import lock

    record = state.read(run)
    status = state.live_status(record)
    holder = lock.live_holder(run)  # the job that owns the run now (claimed, pending or running)
    if holder is not None and status != "running":
        status = "running"
    if status == "succeeded":
        status = "finished"
    if status is None:
        status = "finished" if total and steps_done >= total else "incomplete"
    error = None if holder else (record or {}).get("error")
    if error == status:  # "stopped: stopped" (a record of an older gspo) says nothing more than the status
        error = None
    exit_code = None if holder else (record or {}).get("exit_code")
    return {"status": _text(status), "error": _text(error),
            "failure_kind": None if holder else _text((record or {}).get("failure_kind")),
            "exit_code": exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
            "job_host": _text((holder or {}).get("job_host") or (holder or record or {}).get("host")),
            "job_id": _text((holder or {}).get("job_id")), "job_address": _text((holder or {}).get("dashboard_url"))}


def _section(config: dict[str, Any], key: str) -> dict[str, Any]:
    value = config.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    """A value of a run folder's record as text (a file from someone else may hold any JSON type there)."""
    return None if value is None or value == "" else value if isinstance(value, str) else json.dumps(value)[:200]


def run_info(run: Path, *, size: bool = True) -> dict[str, Any]:
    """One row of `gspo runs list`."""
    config = load_config(run)
    total = total_steps(run, config)
    trainer = _section(config, "trainer")
    info = {"name": run.name, "path": str(run), "engine": _text(trainer.get("engine")),
            "preset": _text(config.get("name")), "total_steps": total, **_metrics_summary(run),
            "metrics_problem": describe_order_problems(order_problems(layout.metrics_file(run)))}
    info.update(status_of(run, info["steps_done"], total))
    latest: dict[str, dict] = {}
    for row in read_evals(run):
        latest[row["benchmark"]] = row  # sorted by step: the last one per benchmark is the newest
    info["evals"] = list(latest.values())
    health = read_health(run)
    info["health"] = {"events": len(health), "errors": sum(1 for h in health if h.get("severity") == "error"),
                      "last": health[-1] if health else None}
    info["size_bytes"] = _du(run) if size else None
    info["last_activity"] = layout.last_activity(run)
    return info


def list_runs(preset: Preset | None = None) -> list[dict[str, Any]]:
    root = layout.runs_dir(preset)
    runs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")] if root.is_dir() else []
    return sorted((run_info(r) for r in runs), key=lambda i: i["last_activity"], reverse=True)


def checkpoints(run: Path) -> list[dict[str, Any]]:
    """Every checkpoint folder: complete (usable) or partial (a save killed midway, or not yet finished)."""
    root = layout.checkpoints_dir(run)
    complete = set(layout.list_steps(run))
    rows = []
    if root.is_dir():
        for p in sorted(root.iterdir(), key=lambda p: p.name):
            m = layout.STEP_DIR.match(p.name.lstrip(".").split(".")[0]) if p.is_dir() else None
            if m:
                step = int(m.group(1))
                ok = step in complete and not p.name.startswith(".")
                rows.append({"step": step, "complete": ok, "path": str(p)})
    return sorted(rows, key=lambda r: (r["step"], not r["complete"]))


def preset_diff(config: dict[str, Any]) -> dict[str, Any]:
    """The run's resolved preset against its base preset as it is now: the --set changes (and later edits)."""
    from gspo_cli.config import presets
    from gspo_cli.config.diff import diff, is_setting
    from gspo_cli.config.schema import to_jsonable

    name = config.get("name")
    if not isinstance(name, str) or layout.name_problem(name) is not None:
        # a run folder's config names its base preset; only a preset name is looked up, never a path or a file
        return {"base": None, "error": f"the run names no preset by a plain name ({str(name)[:60]!r})", "changes": []}
    try:
        from gspo_cli.jobs.secret_env import redact_preset

        base = redact_preset(to_jsonable(presets.load_preset(cast(str, name))))  # config.yaml is a resolved preset: it has a name  # secret values are never shown
    except ConfigError as exc:
        return {"base": name, "error": exc.message, "changes": []}
    changes = [{"key": k, "base": a, "run": b} for k, a, b in diff(base, config) if is_setting(k)
               and not _same_path(a, b)]
    return {"base": name, "error": None, "changes": changes}


def _same_path(a: Any, b: Any) -> bool:
    """A relative path the launch made absolute is no change."""
    if not (isinstance(a, str) and isinstance(b, str)) or not os.path.isabs(b):
        return False
    return Path(a).expanduser().resolve() == Path(b)


# failure kinds (jobs/failures.py) that a rerun of the same run repeats: fix the cause first
REPEATS = {"config": "a configuration or data error", "fatal": "an error that is not known to be transient",
           "stopped": "a health rule with action stop"}


def commands(info: dict[str, Any], config: dict[str, Any]) -> dict[str, str]:
    """The commands `runs show` suggests ("Next"), only those that can work: no eval without a checkpoint, no
    resume of a failure that would repeat (a check of the run's config instead), `--resume` only for a run with a
    checkpoint. Each argument shell-quoted (gspo_cli/shell.py): a run name, preset name, job id or path from a run
    folder never runs as code when the line is pasted into a shell."""
    from gspo_cli.shell import command

    name, preset = info["name"], config.get("name") or "PRESET"
    has_ckpt = any(c["complete"] for c in info.get("checkpoints") or [])
    # the benchmark of the run's validation data (data.val.source `aime-2024` -> aime2024) when the preset has it
    val = str(((config.get("data") or {}).get("val") or {}).get("source") or "").replace("-", "")
    default = val if val in ((config.get("eval") or {}).get("benchmarks") or {}) else \
        "arith" if preset == "tiny" else "aime2024"
    evals = sorted({e["benchmark"] for e in info["evals"]}) or [default]
    out: dict[str, str] = {}
    evaluate = command("gspo", "eval", evals[0], "--preset", preset, "--model", f"{name}:all") if has_ckpt else None
    report = command("gspo", "report", name) if info.get("steps_done") else None
    if info["status"] == "running" and info.get("job_id"):
        # never suggest a second writer: follow or stop the one there is
        where = ["--address", info["job_address"]] if info.get("job_address") else []
        out = {"follow": command("gspo", "jobs", "logs", info["job_id"], "--follow", *where),
               "stop": command("gspo", "jobs", "stop", info["job_id"], *where)}
    else:
        from gspo_cli.config import engine_support

        config_file = f"{info['path']}/config.yaml"
        support = engine_support.of(info.get("engine"))
        if info["status"] in ("failed", "stopped") and info.get("failure_kind") in REPEATS:
            # running it again repeats the failure: check the config, fix the cause, then start it again
            out["check"] = command("gspo", "train", "--preset", config_file, "--dry-run")
        elif info["status"] == "finished":
            more = ["--set", f"trainer.total_training_steps={(info['total_steps'] or 0) * 2}"]
            out["extend"] = (command("gspo", "train", "--resume", name, *more) if support and support.resume_flag
                             else command("gspo", "train", "--preset", config_file, "--run-name", name, *more))
        elif has_ckpt and support is not None and support.resume_flag:
            out["resume"] = command("gspo", "train", "--resume", name)
        else:  # no checkpoint to continue from (or an engine without --resume): the run from its start
            out["restart"] = command("gspo", "train", "--preset", config_file, "--run-name", name)
    if evaluate:
        out["evaluate"] = evaluate
    if report:
        out["report"] = report
    return out


def show(run: Path) -> dict[str, Any]:
    config = load_config(run)
    info = run_info(run)
    info["evals_all"] = read_evals(run)
    info["checkpoints"] = checkpoints(run)
    info["preset_diff"] = preset_diff(config) if config else {"base": None, "error": "no config.yaml", "changes": []}
    info["health_events"] = read_health(run)
    info["commands"] = commands(info, config)
    return info


def remove(run: Path) -> None:
    """Delete a run folder; `run` must come from `names.existing_run` (inside runs/, with a run's marker)."""
    from gspo_cli.runs.names import is_run

    if run.is_symlink() or not is_run(run):  # a second check: never remove a folder that is not a run
        raise ConfigError(f"{run} is not a run folder; nothing removed", "gspo runs list shows the runs")
    now = status_of(run, 0, None)
    if now["status"] == "running":
        job = now["job_id"] or f"pid {(state.read(run) or {}).get('pid')}"
        raise ConfigError(f"run {run.name} is running (its job, {job}, is alive)",
                          f"stop it first: gspo jobs stop {quote(now['job_id']) if now['job_id'] else 'ID'} (gspo jobs list), or Ctrl-C a "
                          "--local run")
    aside = run.with_name(f".{run.name}.removing-{int(time.time())}")
    os.replace(run, aside)  # one rename: the run disappears whole, even if the delete below is interrupted
    shutil.rmtree(aside, ignore_errors=True)

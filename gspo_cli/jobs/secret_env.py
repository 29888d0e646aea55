"""Secret environment variables of a job: delivered through a private file, never through Ray's runtime_env.

Ray logs a job's `runtime_env` (runtime_env_agent.log, job info in the GCS, the dashboard), so a preset's
`env.vars` that gspo's one secret rule names (gspo_cli/private.py: the name contains KEY, TOKEN, SECRET, PASSWORD,
PASSWD or CREDENTIAL, or is listed in the preset's `env.secrets`) are taken out of it. `submit` writes them to `$GSPO_HOME/jobs/secrets/<job id>.json` (folder 0700,
file 0600, on the home every node shares) and puts only that file's path in the job's environment
(`GSPO_SECRETS_FILE`). The job wrapper (`jobs/entry.py`) exports them into its own environment before running
the command (the verl child process inherits them), and every Ray worker of the job does the same at start
(`worker_process_setup_hook`), so actors that need e.g. HF_TOKEN still see it.

When the job ends the file is deleted (`retire`: by the job's driver, and by the CLI that sees the job end or
stops it, in case the driver was killed). What stays is `<job id>.scrub.json` (0600): per value its length,
sha256 and at most 4 leading characters (a quarter of it at most), enough for `gspo jobs logs` to keep
redacting the values, not enough to use them. A restart inside the job (the job wrapper) reuses the values the
wrapper loaded at start; a new job (`gspo train --resume` too) writes a new file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gspo_cli.private import REDACTED, is_secret_name

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

FILE_VAR = "GSPO_SECRETS_FILE"
HOOK = "gspo_cli.jobs.secret_env.load"


def is_secret(name: str, marked: Iterable[str] = ()) -> bool:
    """gspo's one secret rule (gspo_cli/private.py: the name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or
    CREDENTIAL, or the preset lists it in env.secrets): the same for doctor, jobs, dry-runs and run folders."""
    return is_secret_name(name, tuple(marked))


def marked_names(preset: Preset | None) -> list[str]:
    env = getattr(preset, "env", None)
    return list(getattr(env, "secrets", None) or [])


def split(env: dict[str, str], marked: Iterable[str] = ()) -> tuple[dict[str, str], dict[str, str]]:
    """(public, secret) parts of a job environment."""
    marked = list(marked)
    secret = {k: v for k, v in env.items() if is_secret(k, marked)}
    return {k: v for k, v in env.items() if k not in secret}, secret


def redact(env: dict[str, str], marked: Iterable[str] = ()) -> dict[str, str]:
    marked = list(marked)
    return {k: (REDACTED if is_secret(k, marked) else v) for k, v in env.items()}


def redact_preset(data: dict) -> dict:
    """A preset dict (`to_jsonable`) with the values of its secret env.vars replaced: what run folders keep."""
    env = data.get("env") or {}
    marked = env.get("secrets") or []
    if env.get("vars"):
        env["vars"] = redact(env["vars"], marked)
    return data


def drop_redacted(secret: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Secrets whose value is the redaction mark (a run's saved config.yaml) cannot be sent: (kept, dropped)."""
    dropped = [k for k, v in secret.items() if v == REDACTED]
    return {k: v for k, v in secret.items() if v != REDACTED}, dropped


MIN_SCRUB = 4  # a 1-3 character "secret" would blank out ordinary words
SCRUB_SUFFIX = ".scrub.json"


def _file_name(job_id: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "-", job_id)


def fingerprint(value: str) -> dict[str, Any]:
    """What finds `value` in a log without holding it: its length, its sha256, and its first characters (at most
    4, at most a quarter of it) to find the places to hash."""
    return {"len": len(value), "prefix": value[:min(4, len(value) // 4)],
            "sha256": hashlib.sha256(value.encode()).hexdigest()}


def _scrub_print(text: str, print_: dict[str, Any]) -> str:
    size, prefix, digest = int(print_["len"]), str(print_["prefix"]), str(print_["sha256"])
    if not prefix:
        return text
    out, i = [], 0
    while (j := text.find(prefix, i)) >= 0:
        if hashlib.sha256(text[j:j + size].encode()).hexdigest() == digest:
            out += [text[i:j], REDACTED]
            i = j + size
        else:
            out.append(text[i:j + 1])
            i = j + 1
    return "".join(out) + text[i:]


def scrub(text: str, job_id: str) -> str:
    """`text` (a job's logs) with the values of that job's secrets replaced by the redaction mark: from its
    secrets file while the job runs, from the fingerprints left when it ended (`retire`)."""
    import re

    values: list[str] = []
    prints: list[dict[str, Any]] = []
    for name in {_file_name(job_id), _file_name(re.sub(r"-\d$", "", job_id))}:  # submit may add -N to an id
        try:
            values += [str(v) for v in json.loads((secrets_dir() / f"{name}.json").read_text("utf-8")).values()]
        except (OSError, ValueError, AttributeError):
            pass
        try:
            prints += list(json.loads((secrets_dir() / f"{name}{SCRUB_SUFFIX}").read_text("utf-8"))["scrub"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= MIN_SCRUB:
            text = text.replace(value, REDACTED)
    for print_ in sorted(prints, key=lambda p: -int(p.get("len", 0))):
        try:
            text = _scrub_print(text, print_)
        except (KeyError, TypeError, ValueError):
            continue
    return text


def retire(path: str | Path | None) -> bool:
    """The job has ended: delete its secrets file, leaving only fingerprints (`fingerprint`, 0600) so that
    `gspo jobs logs` can still redact the values. True when a file was retired. (A restart inside the job reuses
    the values the job wrapper loaded at start; a new job, `gspo train --resume` included, gets a new file.)"""
    if not path:
        return False
    path = Path(path)
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    from gspo_cli.private import write_private_file

    prints = [fingerprint(str(v)) for v in (values.values() if isinstance(values, dict) else [])
              if len(str(v)) >= MIN_SCRUB]
    record = path.with_name(path.name[:-len(".json")] + SCRUB_SUFFIX) if path.name.endswith(".json") else None
    if record is not None and prints:
        record.unlink(missing_ok=True)
        write_private_file(record, json.dumps({"scrub": prints}).encode())
    path.unlink(missing_ok=True)
    return True


def retire_job(job_id: str) -> bool:
    """`retire` the secrets file of `job_id` (the CLI saw the job end: its driver may have died before it could)."""
    import re

    return any([retire(secrets_dir() / f"{_file_name(name)}.json") for name in {job_id, re.sub(r"-\d$", "", job_id)}])


def secrets_dir() -> Path:
    from gspo_cli import layout

    return layout.job_request_file("x").parent / "secrets"


def write(job_id: str, secret: dict[str, str]) -> Path:
    """The job's secrets in a 0600 file inside a 0700 folder of this user; returns its path."""

    from gspo_cli.private import ensure_private_dir, write_private_file

    ensure_private_dir(secrets_dir().parent, "job requests folder")
    folder = ensure_private_dir(secrets_dir(), "job secrets folder")
    return write_private_file(folder / f"{_file_name(job_id)}.json", json.dumps(secret).encode())


def runtime_env(public: dict[str, str], secret_file: Path | None) -> dict:
    """The Ray runtime_env of a job: public variables, and (with secrets) only the file that holds them."""
    env = dict(public)
    if secret_file is None:
        return {"env_vars": env}
    env[FILE_VAR] = str(secret_file)
    return {"env_vars": env, "worker_process_setup_hook": HOOK}


def load() -> int:
    """Export the secrets named by $GSPO_SECRETS_FILE into this process (job wrapper, Ray worker hook)."""
    path = os.environ.get(FILE_VAR)
    if not path:
        return 0
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        from gspo_cli.errors import ConfigError

        raise ConfigError(f"cannot read the job's secrets file {path}: {exc}",
                          "it is written by the submitting gspo under $GSPO_HOME/jobs/secrets; is $GSPO_HOME "
                          "shared with this node?") from None
    os.environ.update({str(k): str(v) for k, v in data.items()})
    return len(data)

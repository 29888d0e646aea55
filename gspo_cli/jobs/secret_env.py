"""Secret environment variables of a job: delivered through a private file, never through Ray's runtime_env.

Ray logs a job's `runtime_env` (runtime_env_agent.log, job info in the GCS, the dashboard), so a preset's
`env.vars` that gspo's one secret rule names (gspo_cli/private.py: the name contains KEY, TOKEN, SECRET, PASSWORD,
PASSWD or CREDENTIAL, or is listed in the preset's `env.secrets`) are taken out of it. `submit` writes them to `$GSPO_HOME/jobs/secrets/<job id>.json` (folder 0700,
file 0600, on the home every node shares) and puts only that file's path in the job's environment
(`GSPO_SECRETS_FILE`). The job wrapper (`jobs/entry.py`) exports them into its own environment before running
the command (the verl child process inherits them), and every Ray worker of the job does the same at start
(`worker_process_setup_hook`), so actors that need e.g. HF_TOKEN still see it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

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


def scrub(text: str, job_id: str) -> str:
    """`text` (a job's logs) with the values of that job's secrets replaced by the redaction mark."""
    import re

    values: list[str] = []
    for name in {job_id, re.sub(r"-\d$", "", job_id)}:  # submit may have added -N to a taken id
        try:
            values += [str(v) for v in json.loads((secrets_dir() / f"{name}.json").read_text("utf-8")).values()]
        except (OSError, ValueError, AttributeError):
            pass
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= 4:  # a 1-3 character "secret" would blank out ordinary words
            text = text.replace(value, REDACTED)
    return text


def secrets_dir() -> Path:
    from gspo_cli import layout

    return layout.job_request_file("x").parent / "secrets"


def write(job_id: str, secret: dict[str, str]) -> Path:
    """The job's secrets in a 0600 file inside a 0700 folder of this user; returns its path."""
    import re

    from gspo_cli.private import ensure_private_dir, write_private_file

    ensure_private_dir(secrets_dir().parent, "job requests folder")
    folder = ensure_private_dir(secrets_dir(), "job secrets folder")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", job_id)
    return write_private_file(folder / f"{name}.json", json.dumps(secret).encode())


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

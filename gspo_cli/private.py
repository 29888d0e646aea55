"""Folders and files only this user may read: what gspo creates for Ray and for jobs.

`$GSPO_HOME/ray` (tokens, node records, Ray logs), Ray's temp dirs, `$GSPO_HOME/jobs` (job requests) and the
secrets file of a job are created mode 0700 / 0600 by gspo itself. A folder that already exists is used only
when it is a real folder (not a symlink) owned by this user with no access for group or others; anything else is
refused with one error naming the path and the fix, because another local user who made it first (a predictable
name under /tmp) could read Ray's logs or plant a symlink that Ray then writes through.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from gspo_cli.errors import ConfigError


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (KeyError, ImportError):
        return f"uid {uid}"


def check_private_dir(path: Path, what: str = "folder") -> Path:
    """`path` if it is a folder of this user that nobody else can enter; else a ConfigError with the fix."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        problem = f"is a symlink (to {os.readlink(path)})"
    elif not stat.S_ISDIR(st.st_mode):
        problem = "is not a folder"
    elif st.st_uid != os.geteuid():
        problem = f"belongs to {_owner(st.st_uid)}, not to you ({_owner(os.geteuid())})"
    elif st.st_mode & 0o077:
        problem = f"has mode {stat.S_IMODE(st.st_mode):04o}: other users may enter it"
        raise ConfigError(f"gspo's {what} {path} {problem}",
                          f"make it private: chmod 700 {path}  (or remove it and let gspo create it)",
                          exit_code=2)
    else:
        return path
    raise ConfigError(f"gspo's {what} {path} {problem}; gspo refuses to use it",
                      "remove it (as its owner) and let gspo create it, or point gspo elsewhere "
                      "(GSPO_HOME, --temp-dir)", exit_code=2)


def ensure_private_dir(path: str | os.PathLike, what: str = "folder") -> Path:
    """Create `path` with mode 0700 (parents as usual), or check the existing one (`check_private_dir`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask; 0700 needs no more than that
    except FileExistsError:
        pass
    return check_private_dir(path, what)


def new_private_tempdir(prefix: str) -> Path:
    """A new folder under the system temp dir with a random name, created 0700 (never an existing one)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def write_private_file(path: Path, data: bytes) -> Path:
    """Write `path` atomically with mode 0600 from the start: the temp file is created O_EXCL|O_NOFOLLOW (never
    an existing file or a symlink planted at that name), then renamed over `path`."""
    import secrets

    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # umask cannot loosen it, but a stricter one must not tighten 0600 to 0400 either
        os.write(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
    return path


# ---------------------------------------------------------------- which values are secret: the one rule

# A variable is secret when its name contains one of these words (any case), outside the public words below, or
# when the preset lists it in `env.secrets`. The same rule everywhere: `env doctor`, job submission (secrets file
# instead of Ray's runtime_env), dry-runs, run folders' config.yaml, `jobs logs`, `--set` echoes.
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
# Words that contain a marker and name no secret (Hugging Face tokenizers' TOKENIZERS_PARALLELISM).
PUBLIC_WORDS = ("TOKENIZERS", "TOKENIZER")
REDACTED = "<redacted>"


def is_secret_name(name: str, marked: object = ()) -> bool:
    """Whether the variable `name` holds a secret (see SECRET_MARKERS); `marked`: the preset's env.secrets."""
    import re

    if name in set(marked or ()):  # type: ignore[call-overload]
        return True
    upper = re.sub("|".join(PUBLIC_WORDS), "_", str(name).upper())
    return any(m in upper for m in SECRET_MARKERS)


def redact_set(item: str, marked: object = ()) -> str:
    """A `--set KEY=VALUE` as gspo may print or save it, redacted by the key path it resolves to, whatever its form:
    `env.vars.HF_TOKEN=...`, `env.vars={HF_TOKEN: ...}`, `env={vars: {HF_TOKEN: ...}}` all hide the secret's value
    (the one rule above; names listed in the set's own `env.secrets` count too). A value gspo cannot read as a
    mapping is hidden whole."""
    key, sep, value = str(item).partition("=")
    parts = key.strip().split(".")
    if not sep or parts[:2] != ["env", "vars"][:len(parts[:2])] or parts[0] != "env":
        return str(item)
    if len(parts) > 2:  # env.vars.NAME[...]=VALUE
        return f"{key}={REDACTED}" if is_secret_name(parts[2], marked) else str(item)
    if value.strip() in ("", "{}"):
        return str(item)
    redacted = _redact_mapping(value, env_level=len(parts) == 1, marked=marked)
    return f"{key}={redacted if redacted is not None else REDACTED}"


def _redact_mapping(text: str, *, env_level: bool, marked: object) -> str | None:
    """`text` (YAML) with the secret variables' values replaced, as one flow-style line; None when it is not a
    mapping gspo can read (then the caller hides it whole)."""
    import yaml

    try:
        data = yaml.safe_load(text) if len(text) <= 100_000 else None
    except (yaml.YAMLError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    variables = data.get("vars") if env_level else data
    if env_level and variables is None:
        return yaml.safe_dump(data, default_flow_style=True, width=1 << 30).strip()
    if not isinstance(variables, dict):
        return None
    own = data.get("secrets") if env_level else None
    names = [*list(marked or ()), *(map(str, own) if isinstance(own, list) else ())]  # type: ignore[call-overload]
    hidden = {k: (REDACTED if is_secret_name(str(k), names) else v) for k, v in variables.items()}
    out = {**data, "vars": hidden} if env_level else hidden
    return yaml.safe_dump(out, default_flow_style=True, width=1 << 30).strip()

"""Ray token authentication for the clusters gspo starts, and for gspo's own clients of them.

Ray 2.60 checks a shared secret on every gRPC server (GCS, raylets, agents, Ray Client) and on the dashboard's
HTTP API when the process that starts them runs with `RAY_AUTH_MODE=token`; clients send the same token. Ray reads
it from `RAY_AUTH_TOKEN`, else the file named by `RAY_AUTH_TOKEN_PATH`, else `~/.ray/auth_token`. gspo always
names the file explicitly, so nothing depends on what happens to lie in a user's home:

- the cluster token, `$GSPO_HOME/ray/auth_token` (mode 0600): written by `gspo cluster up` (reused by later ups,
  replaced by `--rotate-token`), read by `cluster join` on every node (the home is shared) and by every client;
- the embedded head's token, `$GSPO_HOME/ray/embedded_token` (0600): a new one each time that head starts.

A process's Ray library caches the mode and the token, so `use_in_process` refreshes both after setting them.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from gspo_cli import layout
from gspo_cli.errors import ClusterError

TOKEN = "token"
DISABLED = "disabled"
AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def cluster_token_file() -> Path:
    return layout.ray_dir() / "auth_token"


def embedded_token_file() -> Path:
    return layout.ray_dir() / "embedded_token"


def write_new_token(path: Path) -> Path:
    """A fresh 256-bit token in `path`, in a private folder, created O_EXCL|O_NOFOLLOW with mode 0600."""
    from gspo_cli.private import ensure_private_dir, write_private_file

    ensure_private_dir(path.parent, "Ray folder")
    return write_private_file(path, secrets.token_hex(32).encode())


def ensure_cluster_token(*, rotate: bool = False) -> tuple[Path, bool]:
    """(token file, whether it is new): reuse the shared token unless asked to rotate it."""
    import stat

    from gspo_cli.private import ensure_private_dir

    path = cluster_token_file()
    ensure_private_dir(path.parent, "Ray folder")
    if not rotate and read_token(path):
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise ClusterError(f"{path} is not a token file of yours (a symlink, or another user's file)",
                               "remove it and run `gspo cluster up --rotate-token`")
        os.chmod(path, 0o600)
        return path, False
    return write_new_token(path), True


def read_token(path: str | os.PathLike | None) -> str | None:
    if not path:
        return None
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return text or None


def require_token(path: Path, address: str) -> Path:
    """The token file a node or client needs for the cluster at `address`; a clear error when it is missing."""
    if read_token(path) is None:
        raise ClusterError(
            f"the cluster at {address} requires a token: none at {path}",
            "`gspo cluster up` writes it under the shared $GSPO_HOME/ray/ on the head; mount that $GSPO_HOME here, "
            "or copy the file (mode 0600) and pass --token-file",
        )
    return path


def server_env(env: dict[str, str], token_file: Path | None) -> dict[str, str]:
    """The environment for `ray start`: token auth with exactly this file, or explicitly none."""
    out = {k: v for k, v in env.items() if k not in AUTH_VARS}
    if token_file is None:
        out["RAY_AUTH_MODE"] = DISABLED
    else:
        out.update(RAY_AUTH_MODE=TOKEN, RAY_AUTH_TOKEN_PATH=str(token_file))
    return out


_token_in_use: str | None = None  # the token use_in_process last named to Ray in this process


def use_in_process(mode: str | None, token_file: str | os.PathLike | None = None) -> None:
    """Make this process's Ray clients (jobs SDK, state API, ray.init) use `mode` and this token file.

    `mode=None` leaves whatever the user set (RAY_AUTH_MODE / RAY_AUTH_TOKEN*) untouched.
    """
    if mode is None:
        return
    wanted = {"RAY_AUTH_MODE": mode}
    if token_file:
        wanted["RAY_AUTH_TOKEN_PATH"] = str(token_file)
    global _token_in_use
    token = read_token(token_file) if token_file else None
    # the same file with a new token (the embedded head, restarted by this process) counts as a change too
    changed = any(os.environ.get(k) != v for k, v in wanted.items()) or (
        token_file is not None and ("RAY_AUTH_TOKEN" in os.environ or token != _token_in_use))
    _token_in_use = token
    os.environ.update(wanted)
    if token_file:
        os.environ.pop("RAY_AUTH_TOKEN", None)  # it would win over the file
    import sys

    if changed and "ray._raylet" in sys.modules:
        # Ray cached the mode (RayConfig) and the token when it was first used in this process.
        from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]  # Cython module, absent from ray's stubs

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()


def user_named_token() -> str | None:
    """Where the user named a token in the environment (RAY_AUTH_TOKEN / RAY_AUTH_TOKEN_PATH), else None."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    if os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return os.environ["RAY_AUTH_TOKEN_PATH"]
    return None


_warned_http: set[str] = set()
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def warn_plain_http(url: str) -> None:
    """Once per host: a bearer token sent over plain HTTP to another machine can be read on the way."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "http" or host in LOOPBACK_HOSTS or host.startswith("127.") or host in _warned_http:
        return
    _warned_http.add(host)
    from gspo_cli.console import err

    err.print(f"[yellow]note:[/] the cluster token goes to {host} over plain HTTP (anyone on the path can read it); "
              "use an SSH tunnel or a TLS proxy on untrusted networks (docs/ascend.md, Ports and auth)",
              highlight=False)


def _refused_what(token_file: str | None) -> str:
    """Which token was refused, as the user would name it."""
    if token_file and read_token(token_file):
        return f"the token in {token_file} was refused"
    if token_file:
        return f"no token at {token_file}"
    if os.environ.get("RAY_AUTH_MODE") == DISABLED:
        return "gspo sent no token (this address is not a cluster gspo recorded; name its token with "\
               "RAY_AUTH_TOKEN_PATH)"
    named = user_named_token()
    if named == "RAY_AUTH_TOKEN":
        return "the token in RAY_AUTH_TOKEN was refused"
    if named:
        return f"the token in {named} was refused" if read_token(named) else f"no token at {named}"
    return "no token was sent"


def auth_error(address: str, source: str, token_file: str | None, detail: str) -> ClusterError:
    where = _refused_what(token_file)
    return ClusterError(
        f"the cluster at {address} (from {source}) requires a token: {where} ({detail})",
        "on a host of that cluster the token is $GSPO_HOME/ray/auth_token (shared home); if it was rotated, use "
        "the new file; for another cluster set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH=<its token file>",
    )


def probe_unauthenticated(dashboard_url: str, timeout: float = 5.0) -> tuple[int | None, str]:
    """What the jobs API answers a caller without a token: (HTTP status, first line of the body) or (None, error).

    200 means anyone who can reach the port can submit a job, i.e. run any command on every node.
    """
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{dashboard_url.rstrip('/')}/api/jobs/", timeout=timeout) as resp:
            return resp.status, resp.read(200).decode(errors="replace").strip()[:120]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(200).decode(errors="replace").strip()[:120]
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return None, str(getattr(exc, "reason", exc))[:120]

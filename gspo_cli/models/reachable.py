"""Can a hub model id be loaded from here? Asked in the CLI, in seconds, before any job is submitted.

A hub id (`org/name`) loads from the local Hugging Face cache or from the hub (`HF_ENDPOINT`, default
huggingface.co). Without this check a job on a machine with no hub access retried the download for a minute and
ended in a 25-line traceback; here the answer is one line: in the cache, on the hub, not on the hub, or the hub is
unreachable (with what to do). No torch or transformers import: huggingface_hub only, and only for a hub id.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from gspo_cli.errors import ConfigError

TIMEOUT_S = 3.0


@dataclass
class HubCheck:
    status: str  # cached | on-hub | missing | unreachable
    message: str
    fix: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("cached", "on-hub")


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def in_cache(repo_id: str) -> bool:
    """The model's config.json is in the local HF cache (a snapshot was downloaded before)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    found = try_to_load_from_cache(repo_id, "config.json")
    return isinstance(found, str) and os.path.isfile(found)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on") \
        or os.environ.get("TRANSFORMERS_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _head(url: str, timeout: float) -> int | None:
    """HTTP status of a HEAD request (redirects followed), None when the host cannot be reached."""
    request = urllib.request.Request(url, method="HEAD")
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, TimeoutError, OSError, ValueError):
        return None


def check_hub_id(repo_id: str, *, timeout: float = TIMEOUT_S) -> HubCheck:
    """Where `repo_id` would load from, asked within about `timeout` seconds."""
    if in_cache(repo_id):
        return HubCheck("cached", f"{repo_id} is in the local Hugging Face cache")
    download = f"huggingface-cli download {repo_id} --local-dir DIR on a machine with hub access, then pass DIR"
    if _offline():
        return HubCheck("unreachable", f"{repo_id} is not a local folder, not in the Hugging Face cache, and the hub "
                        "is switched off (HF_HUB_OFFLINE)", download)
    url = f"{endpoint()}/{urllib.parse.quote(repo_id)}/resolve/main/config.json"
    status = _head(url, timeout)
    if status is None:
        return HubCheck("unreachable", f"{repo_id} is not a local folder, not in the Hugging Face cache, and the hub "
                        f"({endpoint()}) cannot be reached from here", f"{download}, or set HF_ENDPOINT to a mirror")
    if status in (401, 403, 404):
        gated = " (gated or private: set HF_TOKEN)" if status in (401, 403) else ""
        return HubCheck("missing", f"{repo_id} is not on the hub {endpoint()}{gated}",
                        "check the spelling (org/name), or pass a local model folder or a run name")
    if status >= 400:
        return HubCheck("unreachable", f"the hub {endpoint()} answered {status} for {repo_id}",
                        f"retry later, or {download}")
    return HubCheck("on-hub", f"{repo_id} is on the hub {endpoint()} (downloaded on first use)")


def require_hub_id(repo_id: str, what: str = "--model") -> None:
    """Raise the one-line error for a hub id that cannot be loaded from here (cached or reachable passes)."""
    check = check_hub_id(repo_id)
    if not check.ok:
        raise ConfigError(f"{what} {check.message}", check.fix)

"""Which model/dataset hub a preset downloads from: the Hugging Face Hub, ModelScope, or a mirror of either.

Chosen by the preset (`hub.name`, `hub.endpoint`) or, when the preset says nothing, by the environment the
ecosystem already uses: `VERL_USE_MODELSCOPE=true` (verl 0.9.1's own switch, verl/__init__.py) picks ModelScope,
`HF_ENDPOINT` / `MODELSCOPE_ENDPOINT` (huggingface_hub's and modelscope_hub's own variables) a mirror. The hub is
data from a preset: a name from a fixed list and an endpoint that is `https://HOST[:PORT]` only (no credentials,
path, query or shell text; plain http only to a loopback host, a local mirror). What a job gets of it is
`job_vars`, judged by the env-var rule like every other job variable (env/exports.py).

Revision pinning: ModelScope's default revision moves (and its SDK picks one by its own release date), so a
download from ModelScope needs `data.<split>.revision` / `model.revision` pinned to a tag or commit id
(`require_pinned`). A model revision also names a folder (`$GSPO_HOME/models/hub/...`), so it is one path
component: letters, digits, `.`, `_`, `-` (`ModelRevision`).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, field_validator, model_validator

from gspo_cli.config.section import Section
from gspo_cli.errors import ConfigError

HUGGINGFACE, MODELSCOPE = "huggingface", "modelscope"
HUBS = (HUGGINGFACE, MODELSCOPE)
TITLES = {HUGGINGFACE: "the Hugging Face Hub", MODELSCOPE: "ModelScope"}
DEFAULT_ENDPOINTS = {HUGGINGFACE: "https://huggingface.co", MODELSCOPE: "https://www.modelscope.cn"}
# The variable each hub's own client reads its endpoint from (huggingface_hub constants, modelscope_hub config.py).
ENDPOINT_VARS = {HUGGINGFACE: "HF_ENDPOINT", MODELSCOPE: "MODELSCOPE_ENDPOINT"}
MODELSCOPE_SWITCH = "VERL_USE_MODELSCOPE"  # verl/__init__.py: "true" patches transformers' hub to ModelScope
# How to get ModelScope's client (the extra in pyproject.toml; the version constraints.txt pins)
MODELSCOPE_INSTALL = "pip install 'gspo[modelscope]' (modelscope==1.40.2)"
# Branch names whose content moves: not a pin.
MOVING_REVISIONS = frozenset({"master", "main"})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_HOSTNAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
ENDPOINT_FIX = "give https://HOST (or https://HOST:PORT): no user:password@, path, query or spaces"
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _revision(value: str) -> str:
    if not _REVISION.match(value) or ".." in value:
        raise ValueError(f"{value[:60]!r} is not a tag or commit id (letters, digits, '.', '_', '-'; at most 128)")
    return value


# `model.revision`: a tag, branch or commit id of the model's hub repo, safe as a folder name.
ModelRevision = Annotated[str, AfterValidator(_revision)]


def unknown_hub(name: str) -> str:
    return f"unknown hub {name!r} (known: {', '.join(HUBS)})"


def endpoint_problem(value: str) -> str | None:
    """Why `value` is not an endpoint gspo sends requests to, or None. Never echoes credentials."""
    text = value.strip()
    if not text or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        return "is empty or holds spaces or control characters"
    parts = urlsplit(text)
    if "@" in parts.netloc:
        return "carries credentials (user:password@); put a token in HF_TOKEN / MODELSCOPE_API_TOKEN instead"
    shown = f"{parts.scheme}://{parts.netloc}" if parts.scheme else repr(text[:40])  # no path or query echoed
    try:
        host, _ = parts.hostname, parts.port
    except ValueError:
        return f"{shown} has no valid host:port"
    if parts.scheme.lower() not in ("https", "http"):
        return f"{shown} is not an https:// URL"
    if not host or not _is_host(host):
        return f"{shown} does not name a host"
    if parts.scheme.lower() == "http" and host not in LOOPBACK:
        return f"{shown} is not https (plain http is accepted only for a loopback mirror: 127.0.0.1, localhost)"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return f"{shown} is not just a host: the endpoint has a path, query or fragment"
    return None


def _is_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return bool(_HOSTNAME.match(host)) and len(host) <= 253


def normal_endpoint(value: str) -> str:
    """`scheme://host[:port]` of a checked endpoint (scheme and host lower-cased, no trailing slash)."""
    parts = urlsplit(value.strip())
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{host}" + (f":{parts.port}" if parts.port else "")


class HubSection(Section):
    # huggingface | modelscope; None: from the environment (VERL_USE_MODELSCOPE=true: modelscope, else huggingface).
    name: str | None = None
    # A mirror of that hub, https://HOST[:PORT]; None: HF_ENDPOINT / MODELSCOPE_ENDPOINT, else the hub's own site.
    endpoint: str | None = None

    @field_validator("name")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        if value is not None and value not in HUBS:
            raise ValueError(unknown_hub(value))
        return value

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is None:
            return None
        problem = endpoint_problem(value)
        if problem:
            raise ValueError(f"{problem}; {ENDPOINT_FIX}")
        return normal_endpoint(value)

    @model_validator(mode="after")
    def _endpoint_needs_name(self) -> HubSection:
        if self.endpoint is not None and self.name is None:
            raise ValueError("hub.endpoint needs hub.name (which hub it mirrors: huggingface or modelscope)")
        return self


@dataclass(frozen=True)
class Hub:
    name: str
    endpoint: str | None  # a mirror; None: the hub's own site
    chosen_by: str  # "preset hub.name", "VERL_USE_MODELSCOPE=true" or "default"
    endpoint_from: str | None = None  # "preset hub.endpoint" or the variable it came from

    @property
    def url(self) -> str:
        return self.endpoint or DEFAULT_ENDPOINTS[self.name]

    @property
    def title(self) -> str:
        return TITLES[self.name]

    def describe(self) -> str:
        via = f"; endpoint from {self.endpoint_from}" if self.endpoint_from else ""
        return f"{self.name} {self.url} (chosen by {self.chosen_by}{via})"

    def job_vars(self) -> dict[str, str]:
        """What a job of this preset needs set so verl, transformers and the hubs' clients use this hub."""
        out: dict[str, str] = {}
        if self.name == MODELSCOPE or self.chosen_by.startswith("preset"):
            out[MODELSCOPE_SWITCH] = "true" if self.name == MODELSCOPE else "false"
        if self.endpoint:
            out[ENDPOINT_VARS[self.name]] = self.endpoint
        return out

    def require_pinned(self, revision: str | None, key: str, what: str) -> None:
        """A ModelScope download needs a tag or commit id: its default revision moves. `key`: the preset key
        that pins it; `what`: the thing downloaded (named first in the error)."""
        if self.name != MODELSCOPE:
            return
        if revision is None or revision.strip().lower() in MOVING_REVISIONS:
            got = "none is set" if revision is None else f"{revision!r} is a branch that moves"
            raise ConfigError(f"{what}: a download from ModelScope needs a pinned revision ({key}: {got})",
                              f"set {key} to a tag or commit id of the repo on {self.url}")


def resolve(section: HubSection | None, environ: Mapping[str, str] | None = None) -> Hub:
    """The hub of a preset (its `hub:` section), else of the environment; a bad endpoint variable is one line."""
    env = os.environ if environ is None else environ
    if section is not None and section.name:
        name, by = section.name, "preset hub.name"
    elif env.get(MODELSCOPE_SWITCH, "").strip().lower() == "true":
        name, by = MODELSCOPE, f"{MODELSCOPE_SWITCH}=true"
    else:
        name, by = HUGGINGFACE, "default"
    if section is not None and section.endpoint:
        return Hub(name, section.endpoint, by, "preset hub.endpoint")
    var = ENDPOINT_VARS[name]
    raw = env.get(var, "")
    if not raw.strip():
        return Hub(name, None, by)
    problem = endpoint_problem(raw)
    if problem:
        raise ConfigError(f"{var}: {problem}", f"unset {var}, or {ENDPOINT_FIX}")
    endpoint = normal_endpoint(raw)
    return Hub(name, None if endpoint == DEFAULT_ENDPOINTS[name] else endpoint, by, var)


def of(preset) -> Hub:
    """The hub of a loaded preset (or of the environment for an object without a `hub` section)."""
    return resolve(getattr(preset, "hub", None))

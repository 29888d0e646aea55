"""`gspo prepare-model`: fetch a pinned hub model once (models/hub_model.py says which and where), with the hub's own
client, into a temp folder beside its place that is renamed into place with its manifest (fsutil.atomic_dir).

Hugging Face (or an `HF_ENDPOINT` / `hub.endpoint` mirror): `HfApi.model_info(repo, revision)` resolves the revision
to its commit (`GET /api/models/{repo}/revision/{rev}`), then `snapshot_download(revision=<that commit>)` reads
the tree and files at exactly that commit (huggingface_hub 1.33). ModelScope: `snapshot_download(repo, revision)`
of modelscope 1.40.2 (`GET /api/v1/models/{repo}/repo/files?Revision=R`, then `.../repo?Revision=R&FilePath=F`; it
checks each file's sha256 against the listing); its client does not report the commit a tag resolves to.

Pickled weights are never fetched (safetensors only), nor the repo's `*.py` unless `model.trust_remote_code` is on.
Every failure is one line, exit 2, and leaves nothing behind: unknown repo, revision not found, gated, the hub
unreachable or switched off, no safetensors weights. A rerun with the folder present makes no request: it checks
every file's sha256 against the manifest and says `unchanged`.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from gspo_cli.config import hub as hubs
from gspo_cli.errors import ConfigError, DataError, GspoError
from gspo_cli.models import hub_model
from gspo_cli.models.hub_model import HubModel

_OFF = ("1", "true", "yes", "on")


def prepare(preset, *, force: bool = False, ref: str | None = None) -> dict[str, Any]:
    """Fetch the preset's pinned hub model (or check the one there); the report of what was done."""
    model = hub_model.of(preset)
    if model is None:
        raise ConfigError(f"model.path {preset.model.path!r} is not a pinned hub model: nothing to prepare",
                          "set model.revision to a tag or commit id of the hub repo (a builtin: model or a local "
                          "folder needs no preparing; a Hugging Face id without a revision loads from the hub)")
    manifest = hub_model.read_manifest(model.folder)
    if manifest is not None and not force:
        why = hub_model.problem(model, manifest, hashes=True)
        if why:
            raise DataError(f"{model.describe()}: {model.folder} does not match its manifest: {why}",
                            f"run: {hub_model.prepare_command(ref, preset)} --force (fetches it again)")
        return _report("unchanged", model, manifest)
    return _report("prepared", model, _fetch(model))


def _report(status: str, model: HubModel, manifest: dict) -> dict[str, Any]:
    return {"status": status, "hub": model.hub.name, "endpoint": model.hub.url, "repo": model.repo,
            "revision": model.revision, "resolved_commit": manifest.get("resolved_commit"),
            "folder": str(model.folder), "summary": hub_model.summary(manifest)}


def _fetch(model: HubModel) -> dict:
    from gspo_cli.fsutil import atomic_dir

    top = model.folder.parents[5]  # $GSPO_HOME: the empty folders above the model's go on failure (up to models/)
    try:
        with atomic_dir(model.folder) as tmp:
            commit = _download(model, tmp)
            for hidden in tmp.glob(".*"):  # the clients' own bookkeeping (huggingface_hub's .cache/)
                if hidden.is_dir():
                    shutil.rmtree(hidden)
            manifest = _manifest(model, tmp, commit)
            (tmp / hub_model.MANIFEST).write_text(hub_model.dumps(manifest))
    except BaseException:
        _remove_empty(model.folder.parent, top)
        raise
    return manifest


def _remove_empty(folder: Path, top: Path) -> None:
    while folder != top and top in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _ignored(model: HubModel) -> list[str]:
    return list(hub_model.PICKLES) + ([] if model.trust_remote_code else list(hub_model.CODE))


def _download(model: HubModel, dest: Path) -> str | None:
    """Fetch into `dest`; the commit the revision resolved to (None when the client does not say)."""
    try:
        if model.hub.name == hubs.MODELSCOPE:
            _modelscope(model, dest)
            return None
        return _huggingface(model, dest)
    except GspoError:
        raise
    except Exception as exc:  # the clients' errors: 404s, DNS, refused, timeouts, each one line
        raise _failure(model, exc, _known_repo(model) if _status(exc) == 404 else None) from None


def _huggingface(model: HubModel, dest: Path) -> str:
    if any(os.environ.get(v, "").lower() in _OFF for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        raise DataError(f"cannot fetch {model.describe()}: the hub is switched off here (HF_HUB_OFFLINE)",
                        "unset HF_HUB_OFFLINE (and TRANSFORMERS_OFFLINE) for gspo prepare-model")
    from huggingface_hub import HfApi, snapshot_download

    info = HfApi(endpoint=model.hub.url).model_info(model.repo, revision=model.revision)
    commit = str(info.sha)
    snapshot_download(model.repo, revision=commit, local_dir=str(dest), endpoint=model.hub.url,
                      ignore_patterns=_ignored(model))
    return commit


def _modelscope(model: HubModel, dest: Path) -> None:
    try:
        from modelscope.hub.snapshot_download import snapshot_download
    except ImportError:
        raise DataError(f"cannot fetch {model.describe()}: the modelscope package is not installed",
                        hubs.MODELSCOPE_INSTALL) from None
    snapshot_download(model.repo, revision=model.revision, local_dir=str(dest), endpoint=model.hub.url,
                      ignore_patterns=_ignored(model))


def _status(exc: BaseException) -> int | None:
    """The HTTP status behind a client's error (requests' / httpx's response; modelscope_hub's "[404]")."""
    code = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(code, int):
        return code
    text = str(exc)
    return next((c for c in (404, 401, 403) if f"[{c}]" in text), None)


def _known_repo(model: HubModel) -> bool | None:
    """After ModelScope's 404 for a revision's file list: is the repo there at all (one more request)? None: the
    Hugging Face client already says which (its errors have their own types), or the question failed."""
    if model.hub.name != hubs.MODELSCOPE:
        return None
    try:
        from modelscope_hub import HubApi
        from modelscope_hub.errors import HubError
    except ImportError:
        return None
    try:
        return bool(HubApi(endpoint=model.hub.url).repo_exists(model.repo, "model"))
    except (HubError, OSError, ValueError):  # its own errors, requests' (OSError) and bad JSON: the 404 stands
        return None


def _failure(model: HubModel, exc: BaseException, known_repo: bool | None = None) -> DataError:
    from gspo_cli.errors import first_line

    where = f"{model.hub.title} {model.hub.url}"
    kind, status = type(exc).__name__, _status(exc)
    if kind == "RevisionNotFoundError" or known_repo:
        return DataError(f"model.revision {model.revision} is not in {model.repo} on {where}",
                         "set model.revision to a tag or commit id that the repo has")
    if kind == "GatedRepoError" or status in (401, 403):
        return DataError(f"{model.repo} on {where} is gated or private: access denied",
                         "set HF_TOKEN / MODELSCOPE_API_TOKEN for an account that may read it")
    if kind == "RepositoryNotFoundError" or status == 404:
        what = "(or that revision of it) is not" if known_repo is None and kind != "RepositoryNotFoundError" else "is not"
        return DataError(f"{model.repo}@{model.revision} {what} on {where}",
                         "check model.path (a model's id on ModelScope often differs from its Hugging Face id) and "
                         "model.revision, or choose the hub with hub.name")
    return DataError(f"cannot fetch {model.describe()} from {model.hub.url} ({first_line(exc)})",
                     "check this host's network, or set hub.endpoint (or HF_ENDPOINT / MODELSCOPE_ENDPOINT) to a "
                     "mirror it can reach")


def _manifest(model: HubModel, folder: Path, commit: str | None) -> dict:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    names = [p.relative_to(folder).as_posix() for p in files]
    if "config.json" not in names or not any(n.endswith(".safetensors") for n in names):
        raise DataError(f"{model.describe()} has no config.json or no *.safetensors weights: gspo fetches "
                        "transformers models with safetensors weights only",
                        "pickled weights (*.bin, *.pt) can run code when loaded (docs/security.md): use a repo or "
                        "revision that has *.safetensors")
    entries = {n: {"sha256": hub_model.sha256(p), "size": p.stat().st_size} for n, p in zip(names, files, strict=True)}
    return {"format": hub_model.FORMAT, "hub": model.hub.name, "endpoint": model.hub.url, "repo": model.repo,
            "revision": model.revision, "resolved_commit": commit, "client": _client(model.hub.name),
            "trust_remote_code": model.trust_remote_code,
            "prepared_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": entries}


def _client(hub: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    name = "modelscope" if hub == hubs.MODELSCOPE else "huggingface_hub"
    try:
        return f"{name} {version(name)}"
    except PackageNotFoundError:
        return name

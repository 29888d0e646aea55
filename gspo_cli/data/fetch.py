"""Where a source's raw input comes from: a local file, the raw cache, or a hub (config/hub.py: the Hugging Face
Hub, ModelScope, or a mirror of either).

Order: `--input NAME=PATH` > the preset's `input` > `<data_dir>/<source>/raw/[modelscope/]<revision>/<hub_filename>`
(a previous download, or a file put there by hand) > a hub download into that same place. With no network and no
file, the error names the URL to fetch and the path to put it at. A ModelScope download needs a pinned revision.
"""

from __future__ import annotations

from pathlib import Path

from gspo_cli.config import hub as hubs
from gspo_cli.data.download import clean_up, missing
from gspo_cli.errors import DataError, first_line


def raw_cache_path(source_dir: Path, hub_filename: str, revision: str | None, hub: hubs.Hub | None = None) -> Path:
    """The Hugging Face cache keeps its pre-hub place; another hub's files get their own folder (a revision name
    on two hubs is not the same bytes)."""
    root = source_dir / "raw" if hub is None or hub.name == hubs.HUGGINGFACE else source_dir / "raw" / hub.name
    return root / (revision or "main") / hub_filename


def hub_url(repo: str, filename: str, revision: str | None, hub: hubs.Hub | None = None) -> str:
    """The URL a browser or curl fetches the file from (ModelScope's is the one its client requests)."""
    if hub is not None and hub.name == hubs.MODELSCOPE:
        return f"{hub.url}/api/v1/datasets/{repo}/repo?Revision={revision or 'master'}&FilePath={filename}"
    base = hub.url if hub is not None else hubs.DEFAULT_ENDPOINTS[hubs.HUGGINGFACE]
    return f"{base}/datasets/{repo}/resolve/{revision or 'main'}/{filename}"


def resolve_input(
    source_name: str,
    *,
    local: str | None,
    hub_repo: str | None,
    hub_filename: str | None,
    revision: str | None,
    source_dir: Path,
    option: str,
    hub: hubs.Hub | None = None,
    revision_key: str = "revision",
) -> tuple[Path, dict]:
    """The local path of the raw file and how it was found ({origin, hub, hub_repo, hub_filename, revision}).
    `revision_key`: the preset key that pins the revision (named when a ModelScope download is not pinned)."""
    if local:
        path = Path(local).expanduser()
        if not path.exists():
            raise DataError(f"{source_name}: input file {path} does not exist", f"check the path given by {option}")
        return path.resolve(), {"origin": "local"}
    if not (hub_repo and hub_filename):
        raise DataError(
            f"{source_name}: no input file and no hub repo to download from",
            f"pass --input {source_name}=PATH or set the preset's data input / hub_repo + hub_filename",
        )
    hub = hub or hubs.resolve(None)
    hub.require_pinned(revision, revision_key, f"{source_name} ({hub_repo})")
    where = {"origin": "hub", "hub": hub.name, "endpoint": hub.url, "hub_repo": hub_repo,
             "hub_filename": hub_filename, "revision": revision}
    cached = raw_cache_path(source_dir, hub_filename, revision, hub)
    if cached.exists():
        return cached, {**where, "origin": "hub-cache"}
    path, commit = download(source_name, hub_repo, hub_filename, revision, cached, option, hub)
    return path, {**where, "commit": commit}


def download(
    source_name: str, repo: str, filename: str, revision: str | None, dest: Path, option: str,
    hub: hubs.Hub | None = None,
) -> tuple[Path, str | None]:
    """Fetch one dataset file from the hub into `dest` (downloaded beside it, then renamed); returns the path and
    the commit it came from (ModelScope's client reports none: the pinned revision and the file's sha256 in the
    manifest are the pin)."""
    hub = hub or hubs.resolve(None)
    offline_hint = (
        f"download {hub_url(repo, filename, revision, hub)} and put it at {dest} "
        f"(or pass {option}=PATH to a copy you have)"
    )
    if hub.name == hubs.MODELSCOPE:
        from gspo_cli.data.modelscope import fetch_dataset_file

        return fetch_dataset_file(source_name, hub, repo, filename, revision, dest, offline_hint), None
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
    except ImportError:
        raise DataError(
            f"{source_name}: no local input and huggingface_hub is not installed to fetch {repo}/{filename}",
            f"pip install huggingface_hub, or {offline_hint}",
        ) from None
    import os
    import shutil

    staging = dest.parent / f".download-{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    try:
        meta = get_hf_file_metadata(hf_hub_url(repo, filename, repo_type="dataset", revision=revision,
                                               endpoint=hub.endpoint))
        got = hf_hub_download(
            repo_id=repo, filename=filename, repo_type="dataset", revision=meta.commit_hash or revision,
            local_dir=str(staging), endpoint=hub.endpoint,
        )
        Path(got).replace(dest)
    except Exception as exc:  # offline, DNS, 401/404, ...: all end the same way for the user
        msg = first_line(exc)
        if "offline mode is enabled" in msg:
            msg = "HF_HUB_OFFLINE is set"
        clean_up(staging, dest, filename, hub)
        if type(exc).__name__ in ("RepositoryNotFoundError", "EntryNotFoundError", "RevisionNotFoundError"):
            raise missing(source_name, hub, repo, filename, revision) from None
        raise DataError(f"{source_name}: cannot download {repo}/{filename} from {hub.title} {hub.url} ({msg})",
                        offline_hint) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest, meta.commit_hash

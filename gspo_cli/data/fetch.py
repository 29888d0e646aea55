"""Where a source's raw input comes from: a local file, the raw cache, or the Hugging Face Hub.

Order: `--input NAME=PATH` > the preset's `input` > `<data_dir>/<source>/raw/<revision>/<hub_filename>` (a
previous download, or a file put there by hand) > a hub download into that same place. With no network and no
file, the error names the URL to fetch and the path to put it at.
"""

from __future__ import annotations

from pathlib import Path

from gspo_cli.errors import DataError


def raw_cache_path(source_dir: Path, hub_filename: str, revision: str | None) -> Path:
    return source_dir / "raw" / (revision or "main") / hub_filename


def hub_url(repo: str, filename: str, revision: str | None) -> str:
    return f"https://huggingface.co/datasets/{repo}/resolve/{revision or 'main'}/{filename}"


def resolve_input(
    source_name: str,
    *,
    local: str | None,
    hub_repo: str | None,
    hub_filename: str | None,
    revision: str | None,
    source_dir: Path,
    option: str,
) -> tuple[Path, dict]:
    """The local path of the raw file and how it was found ({origin, hub_repo, hub_filename, revision})."""
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
    where = {"origin": "hub", "hub_repo": hub_repo, "hub_filename": hub_filename, "revision": revision}
    cached = raw_cache_path(source_dir, hub_filename, revision)
    if cached.exists():
        return cached, {**where, "origin": "hub-cache"}
    path, commit = download(source_name, hub_repo, hub_filename, revision, cached, option)
    return path, {**where, "commit": commit}


def download(
    source_name: str, repo: str, filename: str, revision: str | None, dest: Path, option: str
) -> tuple[Path, str | None]:
    """Fetch one dataset file from the hub into `dest` (downloaded beside it, then renamed); returns the path and
    the commit it came from."""
    offline_hint = (
        f"download {hub_url(repo, filename, revision)} and put it at {dest} "
        f"(or pass {option}=PATH to a copy you have)"
    )
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
        meta = get_hf_file_metadata(hf_hub_url(repo, filename, repo_type="dataset", revision=revision))
        got = hf_hub_download(
            repo_id=repo, filename=filename, repo_type="dataset", revision=meta.commit_hash or revision,
            local_dir=str(staging),
        )
        Path(got).replace(dest)
    except Exception as exc:  # offline, DNS, 401/404, ...: all end the same way for the user
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "offline mode is enabled" in msg:
            msg = "HF_HUB_OFFLINE is set"
        elif len(msg) > 160:
            msg = msg[:157] + "..."
        shutil.rmtree(staging, ignore_errors=True)
        for parent in list(dest.parents)[:4]:  # the empty folders made for the download
            try:
                parent.rmdir()
            except OSError:
                break
        raise DataError(f"{source_name}: cannot download {repo}/{filename} from the Hugging Face Hub ({msg})",
                        offline_hint) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest, meta.commit_hash

"""One dataset file from ModelScope (or a ModelScope mirror), with ModelScope's own client.

`modelscope.hub.file_download.dataset_file_download` asks `GET {endpoint}/api/v1/datasets/{repo}/repo?Revision=R&
FilePath=F` (modelscope 1.40.2 / modelscope_hub 0.5.1). The file lands in a staging folder beside `dest` and is
renamed into place; any failure leaves nothing behind and is one line: not installed, not on that hub (404), or
the hub cannot be reached.
"""

from __future__ import annotations

import os
from pathlib import Path

from gspo_cli.config import hub as hubs
from gspo_cli.config.hub import Hub
from gspo_cli.data.download import clean_up, missing
from gspo_cli.errors import DataError, first_line


def fetch_dataset_file(source_name: str, hub: Hub, repo: str, filename: str, revision: str | None, dest: Path,
                       offline_hint: str) -> Path:
    try:
        from modelscope.hub.file_download import dataset_file_download
    except ImportError:
        raise DataError(f"{source_name}: the hub is ModelScope and the modelscope package is not installed to "
                        f"fetch {repo}/{filename}", f"{hubs.MODELSCOPE_INSTALL}, or {offline_hint}") from None
    staging = dest.parent / f".download-{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    try:
        got = dataset_file_download(repo, filename, revision=revision, local_dir=str(staging), endpoint=hub.url)
        Path(got).replace(dest)
    except Exception as exc:  # 404, DNS, refused, timeouts: each is one line
        clean_up(staging, dest, filename, hub)
        if _status(exc) == 404:
            raise missing(source_name, hub, repo, filename, revision) from None
        raise DataError(f"{source_name}: cannot download {repo}/{filename} from ModelScope {hub.url} "
                        f"({first_line(exc)})", offline_hint) from None
    finally:
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    return dest


def _status(exc: BaseException) -> int | None:
    """The HTTP status behind the client's error (requests' HTTPError carries the response; modelscope_hub's own
    errors name it as "[404]")."""
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    if isinstance(code, int):
        return code
    return 404 if "[404]" in str(exc) else None

"""What every hub download shares: the first line of a client's error, the clean-up after a failed download, and
the one line for a repo, file or revision that is not on the chosen hub."""

from __future__ import annotations

from pathlib import Path

from gspo_cli.config import hub as hubs
from gspo_cli.errors import DataError


def clean_up(staging: Path, dest: Path, filename: str, hub: hubs.Hub) -> None:
    """Drop a failed download's staging folder and the empty folders made for it (up to `<source>/`:
    `<source>/raw/[<hub>/]<revision>/<the file's folders>`)."""
    import shutil

    shutil.rmtree(staging, ignore_errors=True)
    levels = len(Path(filename).parts) - 1 + 3 + (hub.name != hubs.HUGGINGFACE)
    for parent in list(dest.parents)[:levels]:
        try:
            parent.rmdir()
        except OSError:
            break


def missing(source_name: str, hub: hubs.Hub, repo: str, filename: str, revision: str | None) -> DataError:
    """The repo, file or revision is not on that hub (404): name what to check."""
    at = f" at revision {revision}" if revision else ""
    return DataError(f"{source_name}: {repo}/{filename}{at} is not on {hub.title} {hub.url}",
                     "check the preset's data hub_repo / hub_filename / revision against that hub (a dataset's id "
                     "on ModelScope often differs from its Hugging Face id), or choose the hub with hub.name")
